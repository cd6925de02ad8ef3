import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultPostgres

#if canImport(Glibc)
import Glibc
#endif

/// The throwaway clusters of scripts/services/postgres.sh (started by scripts/test.sh).
enum TestCluster {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }
    /// The plain cluster's connection string (unix socket, trust).
    static var conninfo: String? { environment["CREDVAULT_TEST_POSTGRES"] }
    static var tlsConninfo: String? { environment["CREDVAULT_TEST_POSTGRES_TLS"] }
    static var available: Bool { conninfo != nil }
    static var tlsAvailable: Bool { tlsConninfo != nil }
    /// scripts/postgres/cluster.sh, for tests that start a cluster of their own (failover).
    static var clusterScript: String? { environment["CREDVAULT_TEST_POSTGRES_CLUSTER_SCRIPT"] }

    /// A fresh schema name: every test gets its own store.
    static func freshSchema() -> String { "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "") }

    /// Runs SQL as the database administrator would (psql), returns its unaligned output.
    @discardableResult
    static func psql(_ sql: String, conninfo: String? = TestCluster.conninfo) throws -> String {
        let (status, output) = try runTool("/usr/bin/psql", [conninfo!, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
        guard status == 0 else { throw TestFailure("psql failed (\(status)) on: \(sql)") }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Asks the server `query` until it answers `expected`: another session's state (a lock
    /// granted or waited for, a replica in sync) observed on the server, never waited out.
    /// The ceiling only says that it came at all.
    static func untilServer(
        answers expected: String, to query: String, conninfo: String? = TestCluster.conninfo, ceiling: Duration = .seconds(120)
    ) async throws {
        try await withCeiling(ceiling, "the server to answer \(expected) to \(query)") {
            try await offThePool {
                while try psql(query, conninfo: conninfo) != expected { try Task.checkCancellation() }
            }
        }
    }

    /// How many sessions hold (`granted`) or wait for the fleet lock of `store` (its advisory
    /// lock, a bigint key: classid is its high half, objid its low half): this store's own
    /// rows only, whatever other tests lock meanwhile.
    static func fleetLockQuery(_ store: PostgresStore, granted: Bool) -> String {
        let key = UInt64(bitPattern: store.lockKey)
        return "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = \(key >> 32) AND objid = \(key & 0xFFFF_FFFF) "
            + "AND objsubid = 1 AND \(granted ? "" : "NOT ")granted"
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A private directory holding a key file (0600 in 0700), removed on deinit.
final class KeyFileDirectory: Sendable {
    let url: URL
    var keyFile: URL { url.appendingPathComponent("host.key") }

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("cv-pg-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var bytes = [UInt8](repeating: 0, count: 32)
        for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255) }
        _ = FileManager.default.createFile(atPath: keyFile.path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// A fleet store in a fresh schema of the plain cluster, with its key file. Its connections
/// (the helper processes' too) carry the schema as their `application_name`, so that a test
/// can find or end its own sessions on the shared server and nobody else's.
struct TestFleet: Sendable {
    let schema: String
    let keys: KeyFileDirectory
    let store: PostgresStore
    let conninfo: String

    init(
        clock: any CredentialClock = SystemClock(), freshness: Duration = .seconds(1), conninfo: String = TestCluster.conninfo!,
        statementTimeout: Duration = .seconds(5)
    ) throws {
        let schema = TestCluster.freshSchema()
        self.schema = schema
        keys = KeyFileDirectory()
        self.conninfo = conninfo + " application_name=\(schema)"
        var configuration = PostgresConfiguration(
            connectionString: self.conninfo, schema: schema, statementTimeout: statementTimeout, freshnessInterval: freshness, clock: clock)
        configuration.stateDirectory = keys.url
        store = try PostgresStore.initialize(configuration, host: "test-host", key: .keyFile(keys.keyFile))
    }

    func configuration(
        clock: any CredentialClock = SystemClock(), freshness: Duration = .seconds(1), statementTimeout: Duration = .seconds(5)
    ) -> PostgresConfiguration {
        var configuration = PostgresConfiguration(
            connectionString: conninfo, schema: schema, statementTimeout: statementTimeout, freshnessInterval: freshness, clock: clock)
        // This machine's memory of the store (every reopen is another process of the same host).
        configuration.stateDirectory = keys.url
        return configuration
    }

    /// The same store opened again, as another process (host) would.
    func reopen(clock: any CredentialClock = SystemClock(), freshness: Duration = .seconds(1)) throws -> PostgresStore {
        try PostgresStore.open(configuration(clock: clock, freshness: freshness), host: "test-host", key: .keyFile(keys.keyFile))
    }

    /// The same store opened as host `test-host` would be on another machine: its memory of
    /// the store in `state` (a host that never saw what this one saw).
    func reopen(rememberingIn state: KeyFileDirectory) throws -> PostgresStore {
        var configuration = configuration(freshness: .zero)
        configuration.stateDirectory = state.url
        return try PostgresStore.open(configuration, host: "test-host", key: .keyFile(keys.keyFile))
    }

    /// `PostgresStore.acceptRestore` on this host (no cache).
    func acceptRestore() throws -> PostgresStore {
        try PostgresStore.acceptRestore(configuration(freshness: .zero), host: "test-host", key: .keyFile(keys.keyFile))
    }

    /// `fleet_records` of this store, as the administrator names it.
    var records: String { "\(schema).fleet_records" }
}

/// The helper executable built beside the test bundle.
enum FleetHelper {
    static var url: URL {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("credvault-pghelper").path) {
            url.deleteLastPathComponent()
        }
        return url.appendingPathComponent("credvault-pghelper")
    }
}

/// A helper process whose stdout is read line by line.
final class FleetHelperProcess {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private var buffer = Data()
    private var finished = false

    /// This helper's own state directory: its memory of the store (one process, one host).
    private let state = KeyFileDirectory()

    init(_ arguments: [String]) throws {
        process.executableURL = FleetHelper.url
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["CREDVAULT_FLEET_STATE_DIR": state.url.path]) { $1 }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// The next line, or `nil` at end of output.
    func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            if finished { return nil }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { finished = true } else { buffer.append(chunk) }
        }
    }

    /// Reads until a line starting with `prefix`; throws with the helper's stderr if it ends first.
    @discardableResult
    func waitForLine(startingWith prefix: String) throws -> String {
        while let line = nextLine() {
            if line.hasPrefix(prefix) { return line }
        }
        process.waitUntilExit()
        throw TestFailure(
            "helper ended before '\(prefix)': \(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
    }

    func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func waitForExit() -> Int32 {
        while nextLine() != nil {}
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// The error `body` throws, or `nil` when it succeeds.
func thrownError<T>(_ body: () throws(CredentialVaultError) -> T) -> CredentialVaultError? {
    do throws(CredentialVaultError) {
        _ = try body()
        return nil
    } catch { return error }
}

/// The error async `body` throws, or `nil` when it succeeds.
func thrownError<T>(_ body: () async throws(CredentialVaultError) -> T) async -> CredentialVaultError? {
    do throws(CredentialVaultError) {
        _ = try await body()
        return nil
    } catch { return error }
}

/// Runs `path` with `arguments` (posix_spawn and waitpid, never Foundation's `Process`, whose
/// `waitUntilExit` was seen hanging here when called from a task); returns its exit status and
/// stdout. Stderr is discarded.
func runTool(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
    var pipe: [Int32] = [0, 0]
    guard Glibc.pipe(&pipe) == 0 else { throw TestFailure("pipe failed") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addclose(&actions, pipe[0])
    posix_spawn_file_actions_addclose(&actions, pipe[1])
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        argv.forEach { free($0) }
        env.forEach { free($0) }
    }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, path, &actions, nil, argv, env)
    close(pipe[1])
    guard rc == 0 else {
        close(pipe[0])
        throw TestFailure("cannot run \(path)")
    }
    var output = Data()
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = read(pipe[0], &buffer, buffer.count)
        if n > 0 { output.append(contentsOf: buffer[0..<n]) } else if n < 0 && errno == EINTR { continue } else { break }
    }
    close(pipe[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let exited = (status & 0x7f) == 0
    return (exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), String(decoding: output, as: UTF8.self))
}
