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
@Suite("a refresh racing a sign-in, a sign-out or a forced refresh", .ownThread)
struct RefreshRaceTests {
    typealias Rules = SessionManagerTests

    static let bob = AuthSession(
        accessToken: "bob-at", refreshToken: "bob-rt", expiresAt: Date().addingTimeInterval(3600), user: AuthUser(subject: "bob"))

    static func stored(in store: some AsyncTokenStorageAdapter) async throws -> AuthSession? {
        try await SessionStorage(store: store, key: Rules.key, options: .default).load()
    }

    /// Alice's due session is refreshed, its save held; bob signs in meanwhile; bob's session
    /// must be the one stored once the save lands.
    static func expectSignInKept<Base>(on store: GatedStore<Base>, signInWaits: () async -> Bool) async throws {
        try await Rules.seed(store, expiresIn: -10)
        let manager = await Rules.manager(ScriptedRefresher([]), on: store)
        let save = store.hold(.save, times: 1)
        let refreshing = Task { try await manager.getSession() }
        #expect(await store.held.reached(1), "the refresh is saving alice's new tokens")
        let signIn = Task { try await manager.establish(Self.bob) }
        #expect(await signInWaits(), "the sign-in waits for the refresh's lock")
        save.open()
        try await signIn.value
        _ = try await refreshing.value
        #expect(try await Self.stored(in: store)?.user?.subject == "bob", "bob's sign-in was overwritten by alice's refresh")
    }

    @Test("a sign-in while the refresh saves its result is kept (a store with exclusive access)")
    func signInKeptWithExclusiveAccess() async throws {
        let store = GatedStore(FaultInjectingStore())
        try await Self.expectSignInKept(on: store) { await store.started(.exclusiveAccess).reached(2) }
    }

    @Test("a sign-in started while the refresh saves its result is kept (a store without a lock of its own)")
    func signInKeptWithoutExclusiveAccess() async throws {
        // The sign-in waits for the manager's in-process lock, which the store cannot show (had
        // it none, it would save bob at once, before alice's held save lands).
        try await Self.expectSignInKept(on: GatedStore(InMemoryStore())) { true }
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

    /// A refresh of alice's due session under way, held at `gate`: the provider's answer, or the
    /// save of its result. The manager's background refresh waits in `waits`: its stop shows
    /// that a sign-out has begun (a sign-out stops it first thing, then waits for the refresh).
    struct HeldRefresh {
        enum Point { case providerAnswer, save }

        let store = GatedStore(FaultInjectingStore())
        let waits = BackgroundWaits()
        let gate: Gate
        let manager: SessionManager
        let refreshing: Task<AuthSession, any Error>

        init(heldAt point: Point) async throws {
            let asked = Arrivals(), answer = Gate()
            let refresher: any SessionRefresher =
                point == .save
                ? ScriptedRefresher([])
                : HookRefresher {
                    asked.arrive()
                    try? await answer.wait()
                }
            try await Rules.seed(store, expiresIn: -10)
            manager = await Rules.manager(refresher, on: store, proactive: true)
            await waits.install(in: manager)
            await manager.reload()  // starts the background refresh
            #expect(await waits.began.reached(1), "the background refresh waits for its turn")
            gate = point == .save ? store.hold(.save, times: 1) : answer
            let manager = self.manager
            refreshing = Task { try await manager.getSession() }
            let reached = point == .save ? await store.held.reached(1) : await asked.reached(1)
            #expect(reached, "the refresh is held at \(point)")
            #expect(manager.state == .refreshing)
        }

        /// Starts a sign-out, once it has begun.
        func signOut() async -> Task<AuthSession?, any Error> {
            let manager = self.manager
            let signOut = Task { try await manager.signOut() }
            #expect(await waits.stopped.reached(1), "the sign-out has begun: it waits for the refresh")
            return signOut
        }
    }

    @Test("a sign-out that fails busy while the refresh saves its result does not leave the state refreshing")
    func signOutBusyDuringSave() async throws {
        let race = try await HeldRefresh(heldAt: .save)
        race.store.base.inject(.fail(.busy), into: .exclusiveAccess, times: 1)  // the sign-out's, the refresh holds its own
        let signOut = await race.signOut()
        race.gate.open()
        await #expect(throws: AuthError.storage(.busy)) { _ = try await signOut.value }
        _ = try await race.refreshing.value
        #expect(race.manager.state != .refreshing, "nothing is in flight, yet the state says refreshing")
    }

    @Test("a sign-out that fails busy while the provider has not answered the refresh does not leave the state refreshing")
    func signOutBusyDuringProviderCall() async throws {
        let race = try await HeldRefresh(heldAt: .providerAnswer)
        race.store.base.inject(.fail(.busy), into: .exclusiveAccess, times: 1)
        let signOut = await race.signOut()
        race.gate.open()
        await #expect(throws: AuthError.storage(.busy)) { _ = try await signOut.value }
        await #expect(throws: AuthError.notSignedIn, "the refresh's result came after the sign-out began") { _ = try await race.refreshing.value }
        #expect(race.manager.state != .refreshing, "nothing is in flight, yet the state says refreshing")
    }

    @Test("a sign-out cancelled while it waits for the store's lock, after a refresh, does not leave the state refreshing")
    func cancelledSignOut() async throws {
        let race = try await HeldRefresh(heldAt: .providerAnswer)
        race.store.hold(.exclusiveAccess, times: 1)  // the sign-out's (the refresh holds the lock already): never opened
        let signOut = await race.signOut()
        race.gate.open()
        #expect(await race.store.held.reached(1), "the sign-out waits for the store's lock")
        signOut.cancel()
        await #expect(throws: AuthError.cancelled) { _ = try await signOut.value }  // the lock was never given
        await #expect(throws: AuthError.notSignedIn) { _ = try await race.refreshing.value }
        #expect(race.manager.state != .refreshing)
    }
}
