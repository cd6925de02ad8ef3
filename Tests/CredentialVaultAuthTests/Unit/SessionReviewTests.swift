import CredentialVault
import CredentialVaultTesting
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultAuth

/// A provider whose tokens live exactly `lifetime` (obtainedAt = now, expiresAt = now + lifetime).
final class ExactLifetimeRefresher: SessionRefresher {
    let lifetime: TimeInterval
    private let calls = Mutex(0)
    init(lifetime: TimeInterval) { self.lifetime = lifetime }
    var count: Int { calls.withLock { $0 } }
    func refresh(_ session: AuthSession) async throws(AuthError) -> AuthSession {
        let n = calls.withLock { $0 += 1; return $0 }
        let now = Date()
        return AuthSession(accessToken: "exact-\(n)", refreshToken: "rt-\(n)", expiresAt: now.addingTimeInterval(lifetime),
                           user: session.user, obtainedAt: now)
    }
}

/// The auth review (issue 13): each test states a promise the first async version broke.
@Suite("session review regressions")
struct SessionReviewTests {
    typealias Rules = SessionManagerTests

    @Test("1: credentials(minTTL: lifetime) does a forced network refresh on every call and throws each time")
    func minTTLEqualLifetimeStorm() async throws {
        let refresher = ExactLifetimeRefresher(lifetime: 3600)
        let manager = try await Rules.manager(refresher, store: InMemoryStore(), expiresIn: 600)
        var thrown = 0
        for _ in 0..<5 {
            do { _ = try await manager.credentials(minTTL: .seconds(3600)) } catch .tokenLifetimeTooShort { thrown += 1 }
        }
        #expect(refresher.count <= 1, "every call refreshed at the provider")
    }

    @Test("1b: expires_in 0 and credentials(minTTL: .zero): one network refresh per call")
    func zeroLifetimeStorm() async throws {
        let refresher = ExactLifetimeRefresher(lifetime: 0)
        let manager = try await Rules.manager(refresher, store: InMemoryStore(), expiresIn: 600)
        for _ in 0..<5 { _ = try? await manager.credentials(minTTL: .zero) }
        #expect(refresher.count <= 1)
    }

    @Test("2: a sign-in during a refresh is kept (a store with in-process exclusive access)")
    func establishDuringRefreshLost() async throws {
        let store = FaultInjectingStore()
        try await Self.expectSignInKept(on: store) {
            // The refresh's save (the first save from now on) stalls; a sign-in lands meanwhile.
            store.inject(.stall(.milliseconds(300)), into: .save, times: 1)
        }
    }

    /// A refresh is under way; a sign-out then fails (its exclusive access `busy`, as when the
    /// refresh holds it). Once the refresh ends, the state must not still say refreshing.
    static func expectNotLeftRefreshing(_ manager: SessionManager, _ store: FaultInjectingStore) async throws {
        let refreshing = Task { try await manager.getSession() }
        try await Task.sleep(for: .milliseconds(100))
        #expect(manager.state == .refreshing)
        store.inject(.fail(.busy), into: .exclusiveAccess, times: 1)
        await #expect(throws: AuthError.self) { _ = try await manager.signOut() }
        _ = try? await refreshing.value
        try await Task.sleep(for: .milliseconds(50))
        #expect(manager.state != .refreshing, "nothing is in flight, yet the state says refreshing")
    }

    /// Alice's session is due; her refresh's save stalls (`stall`); Bob signs in meanwhile.
    /// Bob's session must be the one stored afterwards.
    static func expectSignInKept(on store: some AsyncTokenStorage, stall: () -> Void) async throws {
        try await Rules.seed(store, expiresIn: -10)
        let manager = await Rules.manager(ExactLifetimeRefresher(lifetime: 3600), on: store)
        stall()
        let refreshing = Task { try await manager.getSession() }
        try await Task.sleep(for: .milliseconds(100))
        let bob = AuthSession(accessToken: "bob-at", refreshToken: "bob-rt", expiresAt: Date().addingTimeInterval(3600),
                              user: AuthUser(subject: "bob"))
        try await manager.establish(bob)
        _ = try? await refreshing.value
        let stored = try await SessionStorage(store: store, key: Rules.key, options: .default).load()
        #expect(stored?.user?.subject == "bob", "bob's sign-in was overwritten by alice's refresh")
    }

    @Test("3: a forced caller joining a non-forced refresh gets no newer token")
    func forcedJoinsUnforced() async throws {
        let store = FaultInjectingStore()
        try await Rules.seed(store, expiresIn: -10)
        let refresher = ExactLifetimeRefresher(lifetime: 3600)
        let manager = await Rules.manager(refresher, on: store)
        store.inject(.stall(.milliseconds(300)), into: .save, times: 1)
        let first = Task { try await manager.getSession() }
        try await Task.sleep(for: .milliseconds(150))
        // The store now still holds access-0; wait until the save landed, then force.
        try await Task.sleep(for: .milliseconds(200))
        let forced = try await manager.getAccessToken(forceRefresh: true)
        let got = try await first.value
        #expect(forced != got.accessToken, "forceRefresh returned the token that is stored")
    }

    @Test("4: invalid_grant whose delete fails: state after the refusal")
    func refusedDeleteFails() async throws {
        let store = FaultInjectingStore()
        try await Rules.seed(store, expiresIn: -10)
        let manager = await Rules.manager(ScriptedRefresher([.failure(.invalidGrant("dead"))]), on: store)
        store.inject(.fail(.io("disk")), into: .delete, times: 1)
        await #expect(throws: AuthError.self) { _ = try await manager.getSession() }
        #expect(manager.state == .unauthenticated(.refreshRefused))
    }

    @Test("5: a sign-out that fails busy during a refresh does not leave the state refreshing")
    func signOutBusyStuckRefreshing() async throws {
        let store = FaultInjectingStore()
        try await Rules.seed(store, expiresIn: -10)
        let manager = await Rules.manager(ExactLifetimeRefresher(lifetime: 3600), on: store)
        store.inject(.stall(.milliseconds(300)), into: .save, times: 1)
        try await Self.expectNotLeftRefreshing(manager, store)
    }
}

/// An in-memory store without a cross-process lock (like InMemoryStore and SecretServiceStore)
/// whose next `stallSaves` saves wait 300 ms first.
final class StallingPlainStore: AsyncTokenStorage {
    let base = InMemoryStore()
    let stallSaves = Mutex(0)
    var capabilities: BackendCapabilities { base.capabilities }
    var defaultService: String { base.defaultService }
    func save(_ value: Data, for key: CredentialKey, options: StorageOptions) async throws(CredentialVaultError) {
        if stallSaves.withLock({ s in defer { s -= 1 }; return s > 0 }) { try? await Task.sleep(for: .milliseconds(300)) }
        try await (base as any AsyncTokenStorage).save(value, for: key, options: options)
    }
    func load(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? { try await (base as any AsyncTokenStorage).load(key) }
    func take(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? { try await (base as any AsyncTokenStorage).take(key) }
    let stallDeletes = Mutex(0)
    func delete(_ key: CredentialKey) async throws(CredentialVaultError) -> Bool {
        if stallDeletes.withLock({ s in defer { s -= 1 }; return s > 0 }) { try? await Task.sleep(for: .milliseconds(200)) }
        return try await (base as any AsyncTokenStorage).delete(key)
    }
    func listKeys(service: String?) async throws(CredentialVaultError) -> [CredentialKey] { try await (base as any AsyncTokenStorage).listKeys(service: service) }
    func metadata(for key: CredentialKey) async throws(CredentialVaultError) -> CredentialMetadata? { try await (base as any AsyncTokenStorage).metadata(for: key) }
    func deleteAll(service: String?) async throws(CredentialVaultError) -> Int { try await (base as any AsyncTokenStorage).deleteAll(service: service) }
}

@Suite("session review regressions, part 2")
struct SessionReviewTestsB {
    typealias Rules = SessionManagerTests

    @Test("2b: a sign-in during a refresh is kept (a store without exclusive access)")
    func establishLost() async throws {
        let store = StallingPlainStore()
        try await SessionReviewTests.expectSignInKept(on: store) { store.stallSaves.withLock { $0 = 1 } }
    }

    @Test("2c: a getSession() during signOut() on a store without exclusive access does not bring the session back")
    func signOutResurrected() async throws {
        let store = StallingPlainStore()
        try await Rules.seed(store, expiresIn: -10)
        let manager = await Rules.manager(ExactLifetimeRefresher(lifetime: 3600), on: store)
        store.stallSaves.withLock { $0 = 1 }
        store.stallDeletes.withLock { $0 = 1 }
        let out = Task { try await manager.signOut(revoke: false) }
        try await Task.sleep(for: .milliseconds(20))
        _ = try? await manager.getSession()
        _ = try? await out.value
        try await Task.sleep(for: .milliseconds(400))
        let stored = try await SessionStorage(store: store, key: Rules.key, options: .default).load()
        #expect(stored == nil, "signOut returned, yet a refreshed session is stored")
    }

    @Test("5b: a failed sign-out during a slow refresh does not leave the state refreshing")
    func stuckRefreshing() async throws {
        let store = FaultInjectingStore()
        try await Rules.seed(store, expiresIn: -10)
        let manager = await Rules.manager(HookRefresher { try? await Task.sleep(for: .milliseconds(300)) }, on: store)
        try await SessionReviewTests.expectNotLeftRefreshing(manager, store)
    }

    @Test("6: a cancelled sign-out during a refresh does not leave the state refreshing")
    func cancelledSignOut() async throws {
        let store = FaultInjectingStore()
        try await Rules.seed(store, expiresIn: -10)
        let manager = await Rules.manager(HookRefresher { try? await Task.sleep(for: .milliseconds(300)) }, on: store)
        let refreshing = Task { try await manager.getSession() }
        try await Task.sleep(for: .milliseconds(100))
        store.inject(.stall(.seconds(2)), into: .exclusiveAccess, times: 1)
        let out = Task { try await manager.signOut() }
        try await Task.sleep(for: .milliseconds(400))
        out.cancel()
        _ = await out.result
        _ = try? await refreshing.value
        #expect(manager.state != .refreshing)
    }
}
