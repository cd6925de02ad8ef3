import CredentialVault
import CredentialVaultTesting
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

/// The published states on every path, and locked or failing stores, which are never "signed out".
@Suite("auth states (scripted provider, fault-injecting store)")
struct AuthStateTests {
    typealias Rules = SessionManagerTests

    /// Collects the states `manager` publishes (their shapes), from the current one on.
    struct Recording {
        private let seen = Recorder<String>()
        private let arrivals = Arrivals()
        private let task: Task<Void, Never>

        init(_ manager: SessionManager) {
            let stream = manager.states()
            let seen = self.seen, arrivals = self.arrivals
            task = Task {
                for await state in stream {  // ends when cancelled
                    seen.append(state.shape)
                    arrivals.arrive()
                }
            }
        }

        /// Every state published so far, once there are at least `count` (the stream hands
        /// them over in order; the collecting task may lag behind the publishing).
        func states(atLeast count: Int) async -> [String] {
            _ = await arrivals.reached(count, ceiling: .seconds(60))
            task.cancel()
            return seen.all
        }
    }

    @Test("a store locked at init is .storeLocked, never signed out; reload() after the unlock finds the session")
    func lockedAtInit() async throws {
        let store = FaultInjectingStore()
        let session = try await Rules.seed(store, expiresIn: 3600)
        store.inject(.fail(.locked), into: .load)
        let manager = await Rules.manager(ScriptedRefresher([]), on: store)
        #expect(manager.state == .unauthenticated(.storeLocked))
        #expect(!manager.hasUsableSession)
        await #expect(throws: AuthError.storage(.locked)) { _ = try await manager.getSession() }
        #expect(manager.state == .unauthenticated(.storeLocked))

        store.clear()  // the user unlocked the keyring
        await #expect(try store.load(Rules.key) != nil, "nothing was deleted")
        #expect(await manager.reload() == .authenticated(SessionSummary(session)))
        #expect(manager.hasUsableSession)
        #expect(try await manager.getSession() == session)
    }

    @Test("an OIDC client on a locked store starts .storeLocked (its init awaits the read)")
    func clientLockedAtInit() async throws {
        let store = FaultInjectingStore()
        store.inject(.fail(.locked), into: .load)
        let stub = try StubProvider { _ in .notFound }
        let client = try await StubOIDC.client(stub, store: store)
        #expect(client.state == .unauthenticated(.storeLocked))
        store.clear()
        #expect(await client.reload() == .unauthenticated(.neverSignedIn), "unlocked and empty: now it is known")
    }

    @Test("other store failures at init are .storeFailure with the error")
    func storeFailureAtInit() async throws {
        let store = FaultInjectingStore()
        store.inject(.fail(.timedOut), into: .load)
        let manager = await Rules.manager(ScriptedRefresher([]), on: store)
        #expect(manager.state == .unauthenticated(.storeFailure(.timedOut)))
        await #expect(throws: AuthError.storage(.timedOut)) { _ = try await manager.storedSession() }
    }

    @Test("a store that locks before a due refresh: .storeLocked, the session kept")
    func lockedBeforeRefresh() async throws {
        let store = FaultInjectingStore()
        let refresher = ScriptedRefresher([])
        let manager = try await Rules.manager(refresher, store: store, expiresIn: -10)
        #expect(manager.state.shape == "authenticated(alice)")
        store.inject(.fail(.locked), into: .load)
        await #expect(throws: AuthError.storage(.locked)) { _ = try await manager.getSession() }
        #expect(manager.state == .unauthenticated(.storeLocked))
        #expect(refresher.refreshCount == 0)
        store.clear()
        #expect(try await manager.getSession().accessToken == "access-1")
        #expect(manager.state.shape == "authenticated(alice)")
    }

    @Test("a store that locks during the refresh: the refresh fails with .locked and the state says .storeLocked")
    func lockedDuringRefresh() async throws {
        let store = FaultInjectingStore()
        let refresher = HookRefresher {
            store.inject(.fail(.locked), into: .load)
            store.inject(.fail(.locked), into: .save)
        }
        let manager = try await Rules.manager(refresher, store: store, expiresIn: -10)
        let states = Recording(manager)
        await #expect(throws: AuthError.storage(.locked)) { _ = try await manager.getSession() }
        #expect(await states.states(atLeast: 3) == ["authenticated(alice)", "refreshing", "unauthenticated(store locked)"])
        store.clear()
        await #expect(try store.load(Rules.key) != nil, "the stored session was not deleted")
    }

    @Test("every transition: never signed in, sign-in, refresh, refused, sign-in, sign-out, expired")
    func everyTransition() async throws {
        let store = InMemoryStore()
        let clock = ManualClock()
        let refresher = ScriptedRefresher([.success(()), .failure(.invalidGrant(nil))], clock: clock)
        let manager = await Rules.manager(refresher, on: store, clock: clock)
        let states = Recording(manager)
        let user = AuthUser(subject: "alice")
        let past = clock.now().addingTimeInterval(-3700)
        let expired = AuthSession(
            accessToken: "a", refreshToken: "r", expiresAt: clock.now().addingTimeInterval(-10), user: user, obtainedAt: past)
        try await manager.establish(expired)
        _ = try await manager.getSession()  // refreshed
        try await manager.establish(expired)
        await #expect(throws: AuthError.invalidGrant(nil)) { _ = try await manager.getAccessToken(forceRefresh: true) }
        await #expect(throws: AuthError.notSignedIn) { _ = try await manager.getSession() }
        #expect(manager.state == .unauthenticated(.refreshRefused), "a later look keeps the reason")
        try await manager.establish(expired)
        try await manager.signOut()
        var noRefresh = expired
        noRefresh.refreshToken = nil
        try await manager.establish(noRefresh)
        clock.advance(by: .seconds(3))  // past the refresh floor (2 s) since the first refresh
        await #expect(throws: AuthError.notSignedIn) { _ = try await manager.getSession() }
        #expect(await states.states(atLeast: 12) == [
            "unauthenticated(never signed in)", "authenticated(alice)", "refreshing", "authenticated(alice)",
            "authenticated(alice)", "refreshing", "unauthenticated(refresh refused)", "authenticated(alice)",
            "unauthenticated(signed out)", "authenticated(alice)", "refreshing", "unauthenticated(expired)",
        ])
        #expect(manager.state == .unauthenticated(.expired))
    }

    @Test("a session deleted by another client on the same store: .signedOut at the next look")
    func signedOutElsewhere() async throws {
        let store = InMemoryStore()
        let manager = try await Rules.manager(ScriptedRefresher([]), store: store, expiresIn: 3600)
        let other = await Rules.manager(ScriptedRefresher([]), on: store)
        try await other.signOut()
        #expect(manager.state.shape == "authenticated(alice)", "nothing was read yet")
        #expect(try await manager.storedSession() == nil)
        #expect(manager.state == .unauthenticated(.signedOut))
    }

    @Test("sign-in and sign-out on a locked store throw .locked and say .storeLocked, not signed in or out")
    func lockedWrites() async throws {
        let store = FaultInjectingStore()
        let manager = try await Rules.manager(ScriptedRefresher([]), store: store, expiresIn: 3600)
        store.inject(.fail(.locked), into: .save)
        await #expect(throws: AuthError.storage(.locked)) {
            try await manager.establish(AuthSession(accessToken: "new", user: AuthUser(subject: "bob")))
        }
        #expect(manager.state == .unauthenticated(.storeLocked))
        store.clear()
        #expect(await manager.reload().shape == "authenticated(alice)")
        store.inject(.fail(.locked), into: .delete)
        await #expect(throws: AuthError.storage(.locked)) { try await manager.signOut() }
        #expect(manager.state == .unauthenticated(.storeLocked))
        store.clear()
        await #expect(try store.load(Rules.key) != nil, "still stored: the sign-out did not happen")
    }

    @Test("hasUsableSession: from memory only; valid now or refreshable")
    func usableSession() async throws {
        let store = FaultInjectingStore()
        let empty = await Rules.manager(ScriptedRefresher([]), on: store)
        #expect(!empty.hasUsableSession)
        let expiredRefreshable = try await Rules.manager(ScriptedRefresher([]), store: store, expiresIn: -10)
        let validOnly = try await Rules.manager(ScriptedRefresher([]), store: store, expiresIn: 600, refreshToken: nil)
        let expiredOnly = try await Rules.manager(ScriptedRefresher([]), store: store, expiresIn: -10, refreshToken: nil)
        let loads = store.calls(of: .load)
        #expect(expiredRefreshable.hasUsableSession)
        #expect(validOnly.hasUsableSession)
        #expect(!expiredOnly.hasUsableSession)
        store.inject(.fail(.locked), into: .load)  // a store call would see a locked store
        #expect(validOnly.hasUsableSession, "answered from memory")
        #expect(store.calls(of: .load) == loads, "no store call")
        store.clear()
        try await validOnly.signOut()
        #expect(!validOnly.hasUsableSession)
    }
}
