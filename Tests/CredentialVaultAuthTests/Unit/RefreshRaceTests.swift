import CredentialVault
import CredentialVaultTesting
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

/// A refresh in flight while the same manager signs in, signs out or is asked for a forced
/// refresh: a sign-in is never overwritten by the refresh, a sign-out never undone by it, a
/// forced caller gets a newer token than the one it saw, and the state never stays
/// `.refreshing` once nothing is in flight. The refresh is held at a gate (its save in a
/// `GatedStore`, or the provider's answer); each next step waits for what the store saw or for
/// the sign-out to have begun (it stops the background refresh first thing).
@Suite("a refresh racing a sign-in, a sign-out or a forced refresh")
struct RefreshRaceTests {
    typealias Rules = SessionManagerTests

    static let bob = AuthSession(
        accessToken: "bob-at", refreshToken: "bob-rt", expiresAt: Date().addingTimeInterval(3600), user: AuthUser(subject: "bob"))

    static func stored(in store: some AsyncTokenStorage) async throws -> AuthSession? {
        try await SessionStorage(store: store, key: Rules.key, options: .default).load()
    }

    @Test("a sign-in while the refresh saves its result is kept (a store with exclusive access)")
    func signInKeptWithExclusiveAccess() async throws {
        let store = GatedStore(FaultInjectingStore())
        try await Rules.seed(store, expiresIn: -10)
        let manager = await Rules.manager(ScriptedRefresher([]), on: store)
        let save = store.hold(.save, times: 1)
        let refreshing = Task { try await manager.getSession() }
        #expect(await store.held.reached(1), "the refresh is saving alice's new tokens")
        let signIn = Task { try await manager.establish(Self.bob) }
        #expect(await store.started(.exclusiveAccess).reached(2), "the sign-in waits for the refresh's lock")
        save.open()
        try await signIn.value
        _ = try await refreshing.value
        #expect(try await Self.stored(in: store)?.user?.subject == "bob", "bob's sign-in was overwritten by alice's refresh")
    }

    @Test("a sign-in started while the refresh saves its result is kept (a store without a lock of its own)")
    func signInKeptWithoutExclusiveAccess() async throws {
        let store = GatedStore(InMemoryStore())
        try await Rules.seed(store, expiresIn: -10)
        let manager = await Rules.manager(ScriptedRefresher([]), on: store)
        let save = store.hold(.save, times: 1)
        let refreshing = Task { try await manager.getSession() }
        #expect(await store.held.reached(1), "the refresh is saving alice's new tokens")
        // The sign-in now waits for the manager's in-process lock (which the store cannot show),
        // or, had it none, saves bob at once, before alice's held save lands.
        let signIn = Task { try await manager.establish(Self.bob) }
        save.open()
        try await signIn.value
        _ = try await refreshing.value
        #expect(try await Self.stored(in: store)?.user?.subject == "bob", "bob's sign-in was overwritten by alice's refresh")
    }

    @Test("a getSession() while signOut() deletes, on a store without a lock of its own, does not bring the session back")
    func signOutNotUndone() async throws {
        let store = GatedStore(InMemoryStore())
        try await Rules.seed(store, expiresIn: -10)
        let manager = await Rules.manager(ScriptedRefresher([]), on: store)
        let delete = store.hold(.delete, times: 1)
        let save = store.hold(.save, times: 1)  // a refresh's save, had it one, lands after the delete
        let signOut = Task { try await manager.signOut(revoke: false) }
        #expect(await store.held.reached(1), "the sign-out is deleting the session")
        let reads = store.finished(.load).count
        let reading = Task { try await manager.getSession() }
        #expect(await store.finished(.load).reached(reads + 1), "getSession() read the session being deleted: it is due")
        delete.open()
        _ = try await signOut.value
        save.open()
        await #expect(throws: AuthError.notSignedIn) { _ = try await reading.value }
        #expect(try await Self.stored(in: store) == nil, "signOut returned, yet a refreshed session is stored")
    }

    @Test("a forced caller gets a newer token than it saw: joining a refresh in flight, and after it")
    func forcedCallerGetsNewerToken() async throws {
        let store = GatedStore(FaultInjectingStore())
        try await Rules.seed(store, expiresIn: -10)
        let manager = await Rules.manager(ScriptedRefresher([]), on: store)
        let save = store.hold(.save, times: 1)
        let first = Task { try await manager.getSession() }
        #expect(await store.held.reached(1), "the refresh is saving its result; access-0 is still stored")
        let reads = store.finished(.load).count
        let forced = Task { try await manager.getAccessToken(forceRefresh: true) }
        #expect(await store.finished(.load).reached(reads + 1), "the forced caller saw access-0")
        save.open()
        #expect(try await forced.value != "access-0")
        let refreshed = try await first.value
        #expect(try await manager.getAccessToken(forceRefresh: true) != refreshed.accessToken, "forceRefresh returned the token that is stored")
    }

    /// A manager over alice's due session on `store` whose background refresh waits in `waits`
    /// (started, and waiting, when this returns): its stop shows that a sign-out has begun.
    static func watchedManager(
        _ refresher: any SessionRefresher, on store: some AsyncTokenStorage, waits: BackgroundWaits
    ) async throws -> SessionManager {
        try await Rules.seed(store, expiresIn: -10)
        let manager = await Rules.manager(refresher, on: store, proactive: true)
        await waits.install(in: manager)
        await manager.reload()  // starts the background refresh
        #expect(await waits.began.reached(1), "the background refresh waits for its turn")
        return manager
    }

    @Test("a sign-out that fails busy while the refresh saves its result does not leave the state refreshing")
    func signOutBusyDuringSave() async throws {
        let store = GatedStore(FaultInjectingStore())
        let waits = BackgroundWaits()
        let manager = try await Self.watchedManager(ScriptedRefresher([]), on: store, waits: waits)
        let save = store.hold(.save, times: 1)
        let refreshing = Task { try await manager.getSession() }
        #expect(await store.held.reached(1), "the refresh is saving its result")
        #expect(manager.state == .refreshing)
        store.base.inject(.fail(.busy), into: .exclusiveAccess, times: 1)  // the sign-out's, the refresh holds its own
        let signOut = Task { try await manager.signOut() }
        #expect(await waits.stopped.reached(1), "the sign-out has begun: it waits for the refresh")
        save.open()
        await #expect(throws: AuthError.storage(.busy)) { _ = try await signOut.value }
        _ = try await refreshing.value
        #expect(manager.state != .refreshing, "nothing is in flight, yet the state says refreshing")
    }

    @Test("a sign-out that fails busy while the provider has not answered the refresh does not leave the state refreshing")
    func signOutBusyDuringProviderCall() async throws {
        let store = GatedStore(FaultInjectingStore())
        let waits = BackgroundWaits()
        let asked = Arrivals(), answer = Gate()
        let refresher = HookRefresher {
            asked.arrive()
            try? await answer.wait()
        }
        let manager = try await Self.watchedManager(refresher, on: store, waits: waits)
        let refreshing = Task { try await manager.getSession() }
        #expect(await asked.reached(1), "the provider was asked")
        #expect(manager.state == .refreshing)
        store.base.inject(.fail(.busy), into: .exclusiveAccess, times: 1)
        let signOut = Task { try await manager.signOut() }
        #expect(await waits.stopped.reached(1), "the sign-out has begun: it waits for the refresh")
        answer.open()
        await #expect(throws: AuthError.storage(.busy)) { _ = try await signOut.value }
        await #expect(throws: AuthError.notSignedIn, "the refresh's result came after the sign-out began") { _ = try await refreshing.value }
        #expect(manager.state != .refreshing, "nothing is in flight, yet the state says refreshing")
    }

    @Test("a sign-out cancelled while it waits for the store's lock, after a refresh, does not leave the state refreshing")
    func cancelledSignOut() async throws {
        let store = GatedStore(FaultInjectingStore())
        let waits = BackgroundWaits()
        let asked = Arrivals(), answer = Gate()
        let refresher = HookRefresher {
            asked.arrive()
            try? await answer.wait()
        }
        let manager = try await Self.watchedManager(refresher, on: store, waits: waits)
        let refreshing = Task { try await manager.getSession() }
        #expect(await asked.reached(1), "the provider was asked (the refresh holds the lock)")
        store.hold(.exclusiveAccess, times: 1)  // the sign-out's: never opened
        let signOut = Task { try await manager.signOut() }
        #expect(await waits.stopped.reached(1), "the sign-out has begun: it waits for the refresh")
        answer.open()
        #expect(await store.held.reached(1), "the sign-out waits for the store's lock")
        signOut.cancel()
        await #expect(throws: AuthError.cancelled) { _ = try await signOut.value }  // the lock was never given
        await #expect(throws: AuthError.notSignedIn) { _ = try await refreshing.value }
        #expect(manager.state != .refreshing)
    }
}
