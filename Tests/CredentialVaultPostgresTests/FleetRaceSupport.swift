import CredentialVault
import CredentialVaultPostgres
import CredentialVaultTestSupport
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A value computed on a thread of its own (a command or a blocking store call that a gate
/// holds), waited for with a ceiling that only stops a hang.
final class Background<T: Sendable>: Sendable {
    private let result = Mutex<T?>(nil)
    private let done = Arrivals()

    init(_ body: @escaping @Sendable () -> T) {
        Thread { [self] in
            let value = body()
            result.withLock { $0 = value }
            done.arrive()
        }.start()
    }

    /// The value; `nil` only when it did not come within the ceiling (a hang).
    func value(ceiling: Duration = .seconds(120)) -> T? {
        guard done.waitBlocking(for: 1, ceiling: ceiling) else { return nil }
        return result.withLock { $0 }
    }
}

/// `credvault` run as a user runs it, against a fleet store of the test cluster.
struct FleetCommandLine: Sendable {
    /// How a command ended.
    struct Outcome: Sendable, CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String
        var description: String { "exit \(status), stdout \(stdout.debugDescription), stderr \(stderr.debugDescription)" }
    }

    let schema: String
    let keyFile: URL
    let home: URL

    /// The lean `credvault` beside the test bundle (it hands fleet commands to `credvault-full`).
    static var executable: String {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("credvault").path) {
            url.deleteLastPathComponent()
        }
        return url.appendingPathComponent("credvault").path
    }

    /// Runs `credvault ARGUMENTS --key-file KEY` as host `test-host` of the store, connecting
    /// with `conninfo` (the cluster, or a gate in front of it), feeding `stdin`.
    func run(_ arguments: [String], conninfo: String, stdin: Data = Data()) throws -> Outcome {
        let environment = [
            "CREDVAULT_POSTGRES": conninfo, "CREDVAULT_FLEET_SCHEMA": schema, "CREDVAULT_FLEET_HOST": "test-host",
            "PATH": "/usr/bin:/bin", "HOME": home.path, "XDG_DATA_HOME": home.appendingPathComponent("data").path,
        ]
        return try Self.spawn(Self.executable, arguments + ["--key-file", keyFile.path], environment: environment, stdin: stdin)
    }

    /// posix_spawn with close-on-exec pipes (no test running in parallel inherits them); the
    /// child gets descriptors 0-2 only. `stdin` fits a pipe buffer and is written first.
    static func spawn(_ path: String, _ arguments: [String], environment: [String: String], stdin: Data) throws -> Outcome {
        guard let input = Descriptors.pipe(), let output = Descriptors.pipe(), let errors = Descriptors.pipe() else {
            throw TestFailure("no pipes")
        }
        precondition(stdin.count < 65536)
        stdin.withUnsafeBytes { _ = write(input.write, $0.baseAddress, $0.count) }
        close(input.write)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input.read, 0)
        posix_spawn_file_actions_adddup2(&actions, output.write, 1)
        posix_spawn_file_actions_adddup2(&actions, errors.write, 2)
        Descriptors.closeInChild(from: 3, &actions)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let env = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            env.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, nil, argv, env)
        close(input.read)
        close(output.write)
        close(errors.write)
        guard rc == 0 else {
            close(output.read)
            close(errors.read)
            throw TestFailure("cannot run \(path)")
        }
        let (out, err) = readBoth(output.read, errors.read)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = (status & 0x7f) == 0
        return Outcome(
            status: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self))
    }

    /// Reads two descriptors to their ends (poll), then closes them.
    private static func readBoth(_ first: Int32, _ second: Int32) -> (Data, Data) {
        var data = [Data(), Data()]
        var open = [first, second]
        var buffer = [UInt8](repeating: 0, count: 65536)
        while open.contains(where: { $0 >= 0 }) {
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for i in 0..<2 where open[i] >= 0 && fds[i].revents != 0 {
                let n = read(open[i], &buffer, buffer.count)
                if n > 0 {
                    data[i].append(contentsOf: buffer[0..<n])
                } else if n == 0 || errno != EINTR {
                    close(open[i])
                    open[i] = -1
                }
            }
        }
        return (data[0], data[1])
    }
}

/// A psql session the test keeps open (its transaction holds locks until `end()`).
final class HeldSession {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer = Data()

    init(conninfo: String = TestCluster.conninfo!) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        process.arguments = [conninfo, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Runs `sql` and returns once the server has answered it (psql prints a marker after).
    func run(_ sql: String) throws {
        let marker = "done-\(UInt32.random(in: 0...UInt32.max))"
        input.fileHandleForWriting.write(Data("\(sql);\nSELECT '\(marker)';\n".utf8))
        while true {
            if let text = String(data: buffer, encoding: .utf8), text.contains(marker) {
                buffer.removeAll()
                return
            }
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw TestFailure("psql ended before answering: \(sql)") }
            buffer.append(chunk)
        }
    }

    /// Ends the session: its transaction is rolled back and its locks released.
    func end() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

extension TestFleet {
    /// Rotates the data key from a process of its own (another host, say), keeping this host:
    /// when it returns, the rotation has committed.
    func rotateElsewhere() throws -> PostgresStore {
        try reopen(freshness: .zero).rotateDataKey(hosts: ["test-host": .keyFile(keys.keyFile)], kdf: .insecureTestingOnly)
    }

    /// This store opened through `gate` without a cache or listener: every read asks the
    /// server, through the gate.
    func configuration(through gate: StatementGate) -> PostgresConfiguration {
        var configuration = PostgresConfiguration(connectionString: gate.conninfo, schema: schema, freshnessInterval: .zero)
        configuration.listensForChanges = false
        configuration.stateDirectory = keys.url
        return configuration
    }

    /// The command line of this store, as host `test-host`.
    var commandLine: FleetCommandLine { FleetCommandLine(schema: schema, keyFile: keys.keyFile, home: keys.url) }
}
