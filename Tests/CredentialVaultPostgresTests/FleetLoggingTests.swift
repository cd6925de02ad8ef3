import CredentialVault
import CredentialVaultPostgres
import CredentialVaultTestSupport
import Foundation
import Logging
import Testing

@testable import CredentialVaultPostgres

#if Metrics
import MetricsTestKit
#endif

/// What the fleet store tells the logger (and, with the `Metrics` trait, the metrics) of its
/// configuration: tampering refused, rotations, retries after a lost connection; never a
/// credential's name or value, the host secret or the connection string.
@Suite(.enabled(if: TestCluster.available, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES)"))
final class FleetLoggingTests {
    let key = CredentialKey(service: "payroll.internal.example", account: "svc-ledger-writer")
    let value = Data("value-that-is-never-logged".utf8)
    let capture = LogCapture()
    #if Metrics
    let metrics = TestMetrics()
    #endif

    /// The store of `fleet` opened again (no cache), logging here (and counting here).
    private func observedStore(_ fleet: TestFleet) throws -> PostgresStore {
        var configuration = fleet.configuration(freshness: .zero)
        configuration.logger = capture.logger()
        #if Metrics
        configuration.metrics = VaultMetrics(factory: metrics)
        #endif
        return try PostgresStore.open(configuration, host: "test-host", secret: .keyFile(fleet.keys.keyFile))
    }

    private func entries(containing text: String) -> [LogCapture.Entry] { capture.entries.filter { $0.message.contains(text) } }

    /// No record shows the credential's names or value, the key file or the connection string.
    private func expectNothingSecretInTheLog(_ fleet: TestFleet) {
        for secret in [key.service, key.account, String(decoding: value, as: UTF8.self), fleet.keys.keyFile.path, fleet.conninfo] {
            #expect(!capture.text.contains(secret), "\(capture.text)")
        }
    }

    @Test("a changed row is refused as tampered, logged at warning (and counted)")
    func tamperingIsLogged() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            try fleet.store.synchronous.save(value, for: key, options: .portable)
            let store = try observedStore(fleet)
            try TestCluster.psql("UPDATE \(fleet.records) SET sealed = set_byte(sealed, 30, (get_byte(sealed, 30) + 1) % 256)")
            #expect(throws: CredentialVaultError.tampered) { try store.synchronous.load(self.key) }
            let refusal = try #require(entries(containing: "failed its verification").first, "\(capture.text)")
            #expect(refusal.level == .warning && refusal.metadata["category"] == "fleet")
            #if Metrics
            #expect(try metrics.expectCounter("credential_vault_tamper_detections_total", [("backend", "postgres"), ("kind", "tampered")]).totalValue == 1)
            #endif
            expectNothingSecretInTheLog(fleet)
        }
    }

    @Test("a rotation is logged at info with its new epoch (and counted)")
    func rotationIsLogged() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            try fleet.store.synchronous.save(value, for: key, options: .portable)
            _ = try observedStore(fleet).rotateDataKey(hosts: ["test-host": .keyFile(fleet.keys.keyFile)])
            let rotated = try #require(entries(containing: "data key was rotated to epoch 2").first, "\(capture.text)")
            #expect(rotated.level == .info)
            #if Metrics
            #expect(try metrics.expectCounter("credential_vault_fleet_rotations_total", [("backend", "postgres"), ("kind", "data_key")]).totalValue == 1)
            #endif
            expectNothingSecretInTheLog(fleet)
        }
    }

    @Test("a statement on a connection the server ended is retried on a new one, logged at warning (and counted)")
    func lostConnectionRetryIsLogged() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            let store = try observedStore(fleet)
            try store.synchronous.save(value, for: key, options: .portable)  // leaves an idle connection in the pool
            #expect(entries(containing: "retry").isEmpty, "\(capture.text)")
            // The administrator ends every session of this store's connections (this test's only).
            try TestCluster.psql(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '\(fleet.schema)' AND pid <> pg_backend_pid()")
            #expect(try store.synchronous.load(key) == value)
            let retry = try #require(entries(containing: "a fleet store statement failed (connection").first, "\(capture.text)")
            #expect(retry.level == .warning && retry.message.contains("retry 1 of 3"), "\(retry.message)")
            #if Metrics
            #expect(try metrics.expectCounter("credential_vault_fleet_retries_total", [("backend", "postgres"), ("reason", "connection")]).totalValue >= 1)
            #endif
            expectNothingSecretInTheLog(fleet)
        }
    }

    @Test("silent by default")
    func silentByDefault() throws {
        #expect(PostgresConfiguration(connectionString: "host=/tmp").logger.handler is SwiftLogNoOpLogHandler)
    }
}
