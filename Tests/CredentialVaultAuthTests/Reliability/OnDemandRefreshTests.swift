import Logging
import CredentialVault
import Foundation
import Synchronization
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

/// On-demand calls use the background refresh's due rule: a token is due within
/// `min(margin, lifetime / 2)` of its expiry, at most once per floor. A token living 30 s (or 0 s)
/// is not refreshed by every call (50 sequential `getAccessToken()` once made 50 refreshes), nor
/// are the client credentials cache's, nor InsForge sessions (an `exp` already past: clock skew).
@Suite("on-demand refresh: one due rule, at most one refresh per floor", .ownThread)
struct OnDemandRefreshTests {
    @Test("50 sequential getAccessToken() with expires_in 30 or 0: at most 2 refreshes", arguments: ["30", "0"])
    func sequentialCalls(lifetime: String) async throws {
        let stub = try BackgroundRefreshTests.provider(lifetime: lifetime)
        let client = try await StubOIDC.client(stub, session: .init(proactiveRefresh: false))
        try await StubOIDC.signIn(client)
        for _ in 0..<50 { _ = try await client.sessions.getAccessToken() }
        let count = BackgroundRefreshTests.refreshes(stub)
        #expect(count <= 2, "expires_in \(lifetime): \(count) refreshes for 50 calls")
    }

    @Test("a 30 s token is refreshed at half its lifetime, not at once")
    func halfLifetimeOnDemand() async throws {
        let clock = ManualClock()
        let stub = try BackgroundRefreshTests.provider(lifetime: "30")
        let client = try await StubOIDC.client(stub, session: .init(proactiveRefresh: false), clock: clock)
        try await StubOIDC.signIn(client)
        clock.advance(by: .seconds(14))
        _ = try await client.sessions.getAccessToken()
        #expect(BackgroundRefreshTests.refreshes(stub) == 0)
        clock.advance(by: .seconds(2))
        #expect(try await client.sessions.getAccessToken() == "at-2")
        #expect(BackgroundRefreshTests.refreshes(stub) == 1)
    }

    @Test("a refresher whose tokens have already expired (InsForge exp in the past): one refresh per floor")
    func alreadyExpired() async throws {
        let clock = ManualClock()
        let refresher = ExpiredRefresher(clock: clock)
        let manager = await SessionManager(
            refresher: refresher, store: InMemoryStore(), key: CredentialKey(service: "test", account: "expired"),
            configuration: .init(proactiveRefresh: false, minimumRefreshInterval: .milliseconds(300)), clock: clock, logger: .credentialVaultSilent)
        try await manager.establish(
            AuthSession(accessToken: "a-0", refreshToken: "r", expiresAt: clock.now().addingTimeInterval(-30), obtainedAt: clock.now()))
        for _ in 0..<50 { _ = try await manager.getAccessToken() }
        #expect(refresher.count == 1)
        clock.advance(by: .milliseconds(350))  // past the floor
        for _ in 0..<50 { _ = try await manager.getAccessToken() }
        #expect(refresher.count == 2)
        _ = try await manager.getAccessToken(forceRefresh: true)  // forced: always
        #expect(refresher.count == 3)
    }

    @Test("client credentials: 50 sequential accessToken() with expires_in 30 or 0: at most 2 token requests", arguments: ["30", "0"])
    func clientCredentials(lifetime: String) async throws {
        let stub = try BackgroundRefreshTests.provider(lifetime: lifetime)
        let client = try TransportTests.serviceClient(tokenEndpoint: stub.url("/token"), timeout: .seconds(5))
        for _ in 0..<50 { _ = try await client.accessToken() }
        let count = stub.requests(to: "/token").count
        #expect(count <= 2, "expires_in \(lifetime): \(count) token requests for 50 calls")
    }

    @Test("the due rule")
    func rule() {
        let rule = RefreshSchedule(margin: .seconds(60), floor: .seconds(2))
        let now = Date()
        func session(lifetime: TimeInterval, age: TimeInterval) -> AuthSession {
            AuthSession(accessToken: "a", refreshToken: "r", expiresAt: now.addingTimeInterval(lifetime - age), obtainedAt: now.addingTimeInterval(-age))
        }
        #expect(!rule.isDue(session(lifetime: 3600, age: 3539), now: now, lastRefresh: nil))
        #expect(rule.isDue(session(lifetime: 3600, age: 3541), now: now, lastRefresh: nil))
        #expect(!rule.isDue(session(lifetime: 30, age: 0), now: now, lastRefresh: nil))
        #expect(!rule.isDue(session(lifetime: 30, age: 14), now: now, lastRefresh: nil))
        #expect(rule.isDue(session(lifetime: 30, age: 16), now: now, lastRefresh: nil))
        #expect(rule.isDue(session(lifetime: 0, age: 0), now: now, lastRefresh: nil))  // issued expired (sign-in): once
        #expect(!rule.isDue(session(lifetime: 0, age: 0), now: now, lastRefresh: now))  // ... not again within the floor
        #expect(!rule.isDue(session(lifetime: 3, age: 1), now: now, lastRefresh: nil))  // inside the floor, valid
        #expect(rule.isDue(session(lifetime: 1, age: 1.5), now: now, lastRefresh: nil))  // inside the floor, expired
        #expect(!rule.isDue(session(lifetime: 1, age: 1.5), now: now, lastRefresh: now.addingTimeInterval(-1.5)))  // one per floor
        #expect(rule.isDue(session(lifetime: 0, age: 3), now: now, lastRefresh: now.addingTimeInterval(-3)))
        #expect(rule.isDue(session(lifetime: -30, age: 3), now: now, lastRefresh: nil))  // exp past at issue (skew)
        #expect(!rule.isDue(AuthSession(accessToken: "a"), now: now, lastRefresh: nil))
    }
}

/// A refresher that hands out access tokens which expired 30 s ago (on `clock`), counting the refreshes.
final class ExpiredRefresher: SessionRefresher {
    private let refreshes = Mutex(0)
    private let clock: any CredentialClock
    init(clock: any CredentialClock) { self.clock = clock }
    var count: Int { refreshes.withLock { $0 } }
    func refresh(_ session: AuthSession) async throws(AuthError) -> AuthSession {
        let n = refreshes.withLock { $0 += 1; return $0 }
        let now = clock.now()
        return AuthSession(accessToken: "a-\(n)", refreshToken: "r", expiresAt: now.addingTimeInterval(-30), obtainedAt: now)
    }
    func revoke(_ session: AuthSession) async throws(AuthError) {}
}
