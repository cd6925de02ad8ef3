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

    /// The lean `credvault` built beside the tests (it hands fleet commands to `credvault-full`).
    static var executable: String { BuiltProducts.credvault.path }

    /// Runs the program at `path` with exactly `environment`, feeding `stdin`.
    static func spawn(_ path: String, _ arguments: [String], environment: [String: String], stdin: Data) throws -> Outcome {
        let ran = try CLIChild.run(arguments, executable: URL(fileURLWithPath: path), environment: environment, stdin: stdin)
        return Outcome(status: ran.status, stdout: ran.stdoutText, stderr: ran.stderr)
    }

    /// Runs `credvault ARGUMENTS --key-file KEY` as host `test-host` of the store, connecting
    /// with `conninfo` (the cluster, or a gate in front of it), feeding `stdin`.
    func run(_ arguments: [String], conninfo: String, stdin: Data = Data()) throws -> Outcome {
        let environment = [
            "CREDVAULT_POSTGRES": conninfo, "CREDVAULT_FLEET_SCHEMA": schema, "CREDVAULT_FLEET_HOST": "test-host",
            "PATH": "/usr/bin:/bin", "HOME": home.path, "XDG_DATA_HOME": home.appendingPathComponent("data").path,
        ]
        // The lean `credvault` (it hands fleet commands to `credvault-full`).
        return try Self.spawn(Self.executable, arguments + ["--key-file", keyFile.path], environment: environment, stdin: stdin)
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
