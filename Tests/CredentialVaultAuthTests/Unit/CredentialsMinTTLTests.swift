import CredentialVault
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

/// `credentials(minTTL:)`: a token valid for at least that long, refreshed when less is left;
/// a typed error when even a fresh token lives less.
@Suite("credentials(minTTL:) (scripted provider)", .ownThread)
struct CredentialsMinTTLTests {
    typealias Rules = SessionManagerTests

    @Test("enough time left: the stored session, no refresh")
    func enoughLeft() async throws {
        let refresher = ScriptedRefresher([])
        let manager = try await Rules.manager(refresher, store: InMemoryStore(), expiresIn: 600)
        #expect(try await manager.credentials(minTTL: .seconds(300)).accessToken == "access-0")
        #expect(refresher.refreshCount == 0)
    }

    @Test("less left than minTTL (though not due by the margin): refreshed, and the new token lasts")
    func refreshesWhenShort() async throws {
        let clock = ManualClock()
        let refresher = ScriptedRefresher([], clock: clock)
        let manager = try await Rules.manager(refresher, store: InMemoryStore(), expiresIn: 600, clock: clock)
        let session = try await manager.credentials(minTTL: .seconds(900))
        #expect(session.accessToken == "access-1")
        #expect(try #require(session.expiresAt).timeIntervalSince(clock.now()) >= 900)
        #expect(refresher.refreshCount == 1)
        #expect(try await manager.credentials(minTTL: .seconds(900)).accessToken == "access-1", "now it lasts: no refresh")
        #expect(refresher.refreshCount == 1)
    }

    @Test("minTTL beyond the provider's token lifetime: tokenLifetimeTooShort after one refresh, then without one")
    func lifetimeTooShort() async throws {
        let refresher = ScriptedRefresher([])
        let manager = try await Rules.manager(refresher, store: InMemoryStore(), expiresIn: 600)
        do {
            _ = try await manager.credentials(minTTL: .seconds(7200))
            Issue.record("a token living an hour was handed out for two")
        } catch .tokenLifetimeTooShort(let lifetime, let minTTL) {
            #expect(minTTL == .seconds(7200))
            #expect(abs((lifetime - .seconds(3600)).secondsValue) < 0.001, "the provider's lifetime: \(lifetime)")
        }
        #expect(refresher.refreshCount == 1)
        // The token just obtained is fresh: a refresh would give the same lifetime.
        do {
            _ = try await manager.credentials(minTTL: .seconds(7200))
            Issue.record("a token living an hour was handed out for two")
        } catch .tokenLifetimeTooShort(_, let minTTL) {
            #expect(minTTL == .seconds(7200))
        }
        #expect(refresher.refreshCount == 1)
        #expect(try await manager.credentials(minTTL: .seconds(1800)).accessToken == "access-1")
    }

    @Test("no refresh token and less left than minTTL: unsupported; expired: notSignedIn")
    func noRefreshToken() async throws {
        let store = InMemoryStore()
        let manager = try await Rules.manager(ScriptedRefresher([]), store: store, expiresIn: 600, refreshToken: nil)
        await #expect(throws: AuthError.unsupported("the access token expires within minTTL and the session has no refresh token: sign in again")) {
            _ = try await manager.credentials(minTTL: .seconds(900))
        }
        #expect(try await manager.credentials(minTTL: .seconds(60)).accessToken == "access-0")
        let expired = try await Rules.manager(ScriptedRefresher([]), store: store, expiresIn: -10, refreshToken: nil)
        await #expect(throws: AuthError.notSignedIn) { _ = try await expired.credentials(minTTL: .seconds(60)) }
    }

    @Test("minTTL equal to the provider's token lifetime: one refresh, then tokenLifetimeTooShort without a request")
    func minTTLEqualToLifetime() async throws {
        let refresher = ScriptedRefresher([], lifetime: 3600)
        let manager = try await Rules.manager(refresher, store: InMemoryStore(), expiresIn: 600)
        var tooShort = 0
        for _ in 0..<5 {
            do { _ = try await manager.credentials(minTTL: .seconds(3600)) } catch .tokenLifetimeTooShort { tooShort += 1 }
        }
        #expect(refresher.refreshCount == 1, "every call refreshed at the provider")
        #expect(tooShort == 5)
    }

    @Test("tokens issued already expired (expires_in 0) and minTTL zero: one refresh, not one per call")
    func zeroLifetime() async throws {
        let refresher = ScriptedRefresher([], lifetime: 0)
        let manager = try await Rules.manager(refresher, store: InMemoryStore(), expiresIn: -10)
        for _ in 0..<5 { _ = try? await manager.credentials(minTTL: .zero) }
        #expect(refresher.refreshCount == 1)
    }

    @Test("a token of unknown expiry counts as lasting")
    func unknownExpiry() async throws {
        let store = InMemoryStore()
        let refresher = ScriptedRefresher([])
        let manager = await Rules.manager(refresher, on: store)
        try await manager.establish(AuthSession(accessToken: "opaque", refreshToken: "r"))
        #expect(try await manager.credentials(minTTL: .seconds(86400)).accessToken == "opaque")
        #expect(refresher.refreshCount == 0)
    }
}
