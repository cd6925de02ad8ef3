import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultAuth

/// How per-resource refreshes (RFC 8707) live beside the main token's in the session manager.
@Suite("per-resource refreshes beside the main token")
struct ResourceRefreshTests {
    /// A provider answering every refresh with a new numbered token (main or for a resource).
    final class NumberingRefresher: SessionRefresher {
        let count = Mutex(0)

        func next() -> AuthSession {
            let number = count.withLock { $0 += 1; return $0 }
            return AuthSession(accessToken: "access-\(number)", expiresAt: Date().addingTimeInterval(3600))
        }

        func refresh(_ session: AuthSession) async throws(AuthError) -> AuthSession {
            var refreshed = next()
            refreshed.refreshToken = session.refreshToken
            refreshed.resourceTokenSet = session.resourceTokenSet
            return refreshed
        }

        var resourceIndicators: ResourceIndicatorSupport { .rotatedTokensMayNarrow }

        func refresh(_ session: AuthSession, resource: String) async throws(AuthError) -> AuthSession {
            session.storing(resource: resource, from: next())
        }
    }

    @Test("a forced main refresh is not satisfied by a record that only gained a resource token meanwhile")
    func forcedMainRefreshAfterResourceRefresh() async throws {
        let refresher = NumberingRefresher()
        let manager = await SessionManager(
            refresher: refresher, store: InMemoryStore(), key: CredentialKey(service: "test.auth", account: "session"),
            configuration: .init(proactiveRefresh: false))
        var session = AuthSession(accessToken: "main-0", refreshToken: "r", expiresAt: Date().addingTimeInterval(3600))
        session.refreshChain = RefreshChain(rotates: false)  // known not to rotate: no learning refresh first
        try await manager.establish(session)
        let seen = try #require(try await manager.storedSession())
        let forResource = try await manager.accessToken(for: URL(string: "https://api.example.com/")!)
        #expect(forResource == "access-1")
        let refreshed = try await manager.refresh(seen: seen, force: true)
        #expect(refreshed.accessToken == "access-2", "the main token was refreshed")
        #expect(refreshed.resourceTokens["https://api.example.com/"]?.accessToken == "access-1", "the resource token is kept")
        #expect(try await manager.signOut(revoke: false) != nil)
        #expect(try await manager.storedSession() == nil, "the resource tokens went with the session")
    }
}
