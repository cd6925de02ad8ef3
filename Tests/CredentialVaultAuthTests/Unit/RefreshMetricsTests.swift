#if Metrics
import CredentialVault
import Foundation
import MetricsTestKit
import Testing

@testable import CredentialVaultAuth

/// A refresh that fails is counted by its failure's kind (the scripted provider injects it).
@Suite("refresh metrics (scripted provider)")
struct RefreshMetricsTests {
    /// A manager over alice's expired session that counts into `metrics`.
    private func manager(_ refresher: ScriptedRefresher, _ metrics: TestMetrics) async throws -> SessionManager {
        let store = InMemoryStore()
        try await SessionManagerTests.seed(store)
        var configuration = SessionManager.Configuration(
            retryPolicy: RetryPolicy(maxRetries: 1, initialDelay: .milliseconds(1)) { _ in }, proactiveRefresh: false)
        configuration.metrics = VaultMetrics(factory: metrics)
        return await SessionManager(
            refresher: refresher, store: store, key: SessionManagerTests.key, configuration: configuration, logger: .credentialVaultSilent)
    }

    @Test("a refresh token the provider rejects counts one invalidGrant refresh, and no success")
    func rejectedRefreshIsCounted() async throws {
        let metrics = TestMetrics()
        let manager = try await manager(ScriptedRefresher([.failure(.invalidGrant("revoked"))]), metrics)
        await #expect(throws: AuthError.invalidGrant("revoked")) { _ = try await manager.getSession() }
        #expect(try metrics.expectCounter("credential_vault_session_refreshes_total", [("outcome", "invalidGrant")]).totalValue == 1)
        #expect(try metrics.expectTimer("credential_vault_session_refresh_seconds", [("outcome", "invalidGrant")]).values.count == 1)
        #expect(throws: (any Error).self) { try metrics.expectCounter("credential_vault_session_refreshes_total", [("outcome", "success")]) }
    }

    @Test("transient failures retried into a success count one success: the refresh, not its attempts")
    func retriedRefreshCountsOnce() async throws {
        let metrics = TestMetrics()
        let refresher = ScriptedRefresher([.failure(.networkError("reset"))])
        let manager = try await manager(refresher, metrics)
        _ = try await manager.getSession()
        #expect(refresher.refreshCount == 2)
        #expect(try metrics.expectCounter("credential_vault_session_refreshes_total", [("outcome", "success")]).totalValue == 1)
        #expect(metrics.counters.count == 1, "\(metrics.counters.map(\.dimensions))")
    }
}
#endif
