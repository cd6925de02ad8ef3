import CredentialVault
import CredentialVaultPostgres
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

/// A failover drill on a cluster of its own (a primary and a synchronous streaming replica):
/// the primary is killed mid-load and the replica promoted; writes resume through the
/// multi-host connection string, every acknowledged write is there, and the errors meanwhile
/// are typed.
@Suite(.enabled(if: TestCluster.clusterScript != nil, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES_CLUSTER_SCRIPT)"))
struct FleetFailoverTests {
    /// Runs scripts/postgres/cluster.sh; returns its stdout.
    @discardableResult
    static func cluster(_ arguments: [String]) throws -> String {
        // The server user must reach the cluster's directory: /tmp, not a private TMPDIR.
        let run = try CLIChild.run(
            arguments, executable: URL(fileURLWithPath: TestCluster.clusterScript!),
            environment: ["PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "TMPDIR": "/tmp"], timeout: 600)
        guard run.status == 0 else { throw TestFailure("cluster.sh \(arguments.joined(separator: " ")) failed: \(run.stderr)") }
        return run.stdoutText
    }

    static func variable(_ name: String, in output: String) -> String? {
        for line in output.split(separator: "\n") where line.hasPrefix("export \(name)='") {
            return String(line.dropFirst("export \(name)='".count).dropLast())
        }
        return nil
    }

    @Test func aPrimaryKilledMidLoadLosesNoAcknowledgedWrite() async throws {
        let output = try await offThePool { try Self.cluster(["start", "--replica"]) }
        let dir = try #require(Self.variable("PGTEST_DIR", in: output))
        defer { _ = try? Self.cluster(["stop", dir]) }
        let primary = try #require(Self.variable("PGTEST_CONNINFO", in: output))
        let failover = try #require(Self.variable("PGTEST_FAILOVER_CONNINFO", in: output))
        // Synchronous replication: a commit is acknowledged once the replica has it (with
        // asynchronous replication PostgreSQL itself may lose the last commits in a failover).
        try await offThePool {
            try TestCluster.psql("ALTER SYSTEM SET synchronous_standby_names = '*'", conninfo: primary)
            try TestCluster.psql("ALTER SYSTEM SET synchronous_commit = on", conninfo: primary)
            try TestCluster.psql("SELECT pg_reload_conf()", conninfo: primary)
        }
        try await TestCluster.untilServer(
            answers: "1", to: "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'", conninfo: primary)

        // The statement deadline is a ceiling against a hang, not a speed the test expects: a
        // killed primary resets its connections at once, and the opens and writes of a loaded
        // machine (the whole suite in parallel) must not time out before the failover.
        let fleet = try await offThePool { try TestFleet(freshness: .zero, conninfo: failover, statementTimeout: .seconds(60)) }
        var configuration = fleet.configuration(freshness: .zero, statementTimeout: .seconds(60))
        configuration.reconnectAttempts = 10
        configuration.listensForChanges = false
        let store = try await PostgresStore.open(configuration, host: "test-host", secret: .keyFile(fleet.keys.keyFile))
        let log = WriteLog()
        let writer = Thread {
            var i = 0
            while !log.stop.load(ordering: .relaxed) {
                do throws(CredentialVaultError) {
                    try store.synchronous.save(Data("value-\(i)".utf8), for: CredentialKey(service: "failover", account: "k\(i)"), options: .portable)
                    log.acknowledged.withLock { $0.append(i) }
                    log.acknowledgements.arrive()
                } catch {
                    log.errors.withLock { $0.append(error) }
                }
                i += 1
            }
            log.finished.arrive()
        }
        writer.start()
        try #require(await log.acknowledgements.reached(30), "writes acknowledged before the failover")
        try await offThePool {
            try Self.cluster(["kill-primary", dir])
            try Self.cluster(["promote", dir])
        }
        let atPromotion = log.acknowledgements.count
        try #require(await log.acknowledgements.reached(atPromotion + 30), "writes acknowledged by the promoted replica")
        log.stop.store(true, ordering: .relaxed)
        try #require(await log.finished.reached(1), "the writer stopped")

        // Every acknowledged write is on the new primary, with its value.
        let reader = try await PostgresStore.open(configuration, host: "test-host", secret: .keyFile(fleet.keys.keyFile))
        for i in log.acknowledged.withLock({ $0 }) {
            #expect(try reader.synchronous.load(CredentialKey(service: "failover", account: "k\(i)")) == Data("value-\(i)".utf8), "write \(i) lost")
        }
        // While it failed over, errors were the typed "unreachable" or "timed out" ones.
        for error in log.errors.withLock({ $0 }) {
            switch error {
            case .notAvailable, .timedOut, .busy: break
            default: Issue.record("untyped failover error: \(error)")
            }
        }
    }
}

/// What the writer thread acknowledged, what failed, when to stop, and when it did.
final class WriteLog: Sendable {
    let acknowledged = Mutex<[Int]>([])
    /// One arrival per acknowledged write (the test waits on counts, never polls).
    let acknowledgements = Arrivals()
    let errors = Mutex<[CredentialVaultError]>([])
    let stop = Atomic(false)
    /// Arrived at once the writer has stopped.
    let finished = Arrivals()
}
