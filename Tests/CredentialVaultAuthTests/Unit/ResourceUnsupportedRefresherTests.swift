import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultAuth

/// A provider without resource indicators (InsForge's refresher, any `SessionRefresher` that
/// keeps the protocol's default) answers a resource's token with `unsupported`, before the
/// session's refresh token is spent on learning whether it rotates.
@Suite("resource tokens from a provider without resource indicators")
struct ResourceUnsupportedRefresherTests {
    /// Rotates every refresh token (as InsForge does); no `refresh(_:resource:)` of its own.
    final class RotatingRefresher: SessionRefresher {
        let count = Mutex(0)

        func refresh(_ session: AuthSession) async throws(AuthError) -> AuthSession {
            let number = count.withLock { $0 += 1; return $0 }
            return AuthSession(accessToken: "access-\(number)", refreshToken: "r\(number)", expiresAt: Date().addingTimeInterval(3600))
        }
    }

    @Test("a resource's token from a provider without resource indicators is unsupported, and no refresh token is spent")
    func unsupportedWithoutSpendingARefresh() async throws {
        let refresher = RotatingRefresher()
        let manager = await SessionManager(
            refresher: refresher, store: InMemoryStore(), key: CredentialKey(service: "test.auth", account: "session"),
            configuration: .init(proactiveRefresh: false))
        try await manager.establish(AuthSession(accessToken: "main-0", refreshToken: "r0", expiresAt: Date().addingTimeInterval(3600)))
        await #expect(throws: AuthError.unsupported("this provider does not support resource indicators")) {
            _ = try await manager.accessToken(for: URL(string: "https://api.example.com/")!)
        }
        #expect(refresher.count.withLock { $0 } == 0, "the refresh token was spent to learn a rotation no resource can use")
    }
}
