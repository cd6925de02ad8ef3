#if Metrics
import CredentialVault
import CredentialVaultTestSupport
import Foundation
import MetricsTestKit
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    /// What a session refresh counts (docs/API.md, "Metrics"), into a test backend of the
    /// test's own (`MetricsSystem.bootstrap` is process-wide and once only).
    @Suite("session metrics", .ownThread)
    struct SessionMetrics {
        @Test("a refresh against the provider counts one success and times it; a session still fresh counts nothing")
        func refreshIsCounted() async throws {
            let provider = try Glewlwyd.require()
            let metrics = TestMetrics()
            var configuration = provider.configuration()
            configuration.session.metrics = VaultMetrics(factory: metrics)
            let client = try await OIDCClient(configuration: configuration, store: InMemoryStore(), logger: .credentialVaultSilent)
            let first = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            #expect(metrics.counters.isEmpty, "a sign-in is no refresh")
            let token = try await client.getAccessToken(forceRefresh: true)
            #expect(token != first.accessToken)
            #expect(try await client.getAccessToken() == token)  // fresh: the provider is not asked
            #expect(try metrics.expectCounter("credential_vault_session_refreshes_total", [("outcome", "success")]).totalValue == 1)
            let durations = try metrics.expectTimer("credential_vault_session_refresh_seconds", [("outcome", "success")])
            #expect(durations.values.count == 1 && durations.values[0] > 0, "\(durations.values)")
            // No token, user or key in any dimension: the outcome only.
            for dimensions in metrics.counters.map(\.dimensions) + metrics.timers.map(\.dimensions) {
                #expect(dimensions.map(\.0) == ["outcome"], "\(dimensions)")
            }
        }
    }
}
#endif
