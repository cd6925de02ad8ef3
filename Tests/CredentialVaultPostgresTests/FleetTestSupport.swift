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
        let psql = try CLIChild.run("/usr/bin/psql", [conninfo!, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
        guard psql.status == 0 else { throw TestFailure("psql failed (\(psql.status)) on: \(sql): \(psql.stderr)") }
        return psql.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
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
        store = try PostgresStore.initialize(configuration, host: "test-host", secret: .keyFile(keys.keyFile))
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
        try PostgresStore.open(configuration(clock: clock, freshness: freshness), host: "test-host", secret: .keyFile(keys.keyFile))
    }

    /// The same store opened as host `test-host` would be on another machine: its memory of
    /// the store in `state` (a host that never saw what this one saw).
    func reopen(rememberingIn state: KeyFileDirectory) throws -> PostgresStore {
        var configuration = configuration(freshness: .zero)
        configuration.stateDirectory = state.url
        return try PostgresStore.open(configuration, host: "test-host", secret: .keyFile(keys.keyFile))
    }

    /// `PostgresStore.acceptRestore` on this host (no cache).
    func acceptRestore() throws -> PostgresStore {
        try PostgresStore.acceptRestore(configuration(freshness: .zero), host: "test-host", secret: .keyFile(keys.keyFile))
    }

    /// `fleet_records` of this store, as the administrator names it.
    var records: String { "\(schema).fleet_records" }
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

