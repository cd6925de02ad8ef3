import CredentialVault
import CredentialVaultTesting
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

/// The session manager never blocks its callers' threads on the store: while callers wait on a
/// store that holds their calls (a `GatedStore` the test opens), the cooperative pool keeps
/// running (a heartbeat beats), and cancelled callers return `.cancelled` while the store still
/// holds the calls. Each property is an outcome, never a latency: the store answers only once
/// the heartbeat has beaten and the cancelled callers have returned. (The latencies themselves
/// are `credvault-bench`'s.)
@Suite("no blocking on a stalled store")
struct NonBlockingTests {
    typealias Rules = SessionManagerTests

    /// Starts 8 `getSession()` callers of `manager`; once `held` store calls wait at `store`'s
    /// gate, the heartbeat must beat 50 times, and then the callers are cancelled: each must
    /// return `.cancelled` on its own, the store still holding the calls (the ceiling only stops
    /// a hang). The gate is opened only after.
    static func expectCancelledWhileHeld(
        _ manager: SessionManager, _ store: GatedStore<FaultInjectingStore>, held: Int, _ gate: Gate
    ) async throws {
        let heartbeat = Heartbeat.start()
        let callers = (0..<8).map { _ in
            Task { () -> AuthError? in
                do throws(AuthError) {
                    _ = try await manager.getSession()
                    return nil
                } catch { return error }
            }
        }
        #expect(await store.held.reached(held), "the callers wait on the store")
        #expect(await heartbeat.beats(50), "the pool kept running while the callers waited on the store")
        for caller in callers { caller.cancel() }
        let errors = try await withCeiling(.seconds(60), "8 cancelled callers") {
            var errors: [AuthError?] = []
            for caller in callers { errors.append(await caller.value) }
            return errors
        }
        #expect(errors.allSatisfy { $0 == .cancelled }, "\(errors)")
        await heartbeat.stop()
        gate.open()
    }

    @Test("8 getSession() calls on a store holding every read: the heartbeat beats; cancelled, they return .cancelled while the reads are held")
    func stalledReads() async throws {
        let store = GatedStore(FaultInjectingStore())
        let manager = try await Rules.manager(ScriptedRefresher([]), store: store, expiresIn: 3600)
        try await Self.expectCancelledWhileHeld(manager, store, held: 8, store.hold(.load))
        #expect(manager.state.shape == "authenticated(alice)", "a cancelled read says nothing about the session")
    }

    @Test("8 callers sharing one refresh whose write is held: cancelled, they return while it is held; the refresh still lands")
    func stalledSharedRefresh() async throws {
        let store = GatedStore(FaultInjectingStore())
        let refresher = ScriptedRefresher([])
        let manager = try await Rules.manager(refresher, store: store, expiresIn: -10)
        // One held call: the shared refresh's save of its result.
        try await Self.expectCancelledWhileHeld(manager, store, held: 1, store.hold(.save, times: 1))
        // The shared refresh was not cancelled with its callers: its result is saved and handed
        // out (a cancelled refresh would leave the expired session, and a second refresh).
        #expect(try await manager.getSession().accessToken == "access-1")
        #expect(try await manager.storedSession()?.refreshToken == "refresh-1")
        #expect(refresher.refreshCount == 1, "one refresh for all")
    }

    @Test("a session read just before a refresh landed is read again, not handed out expired within the refresh floor")
    func aReadOlderThanTheLastRefreshIsReadAgain() async throws {
        let refresher = ScriptedRefresher([])
        let manager = try await Rules.manager(refresher, store: FaultInjectingStore(), expiresIn: -10)
        let replaced = try #require(try await manager.storedSession(), "the expired session")
        #expect(try await manager.getSession().accessToken == "access-1", "the refresh")
        // What a caller holds whose read of the store came just before the refresh's save
        // (seen once in a parallel run: that caller got the expired session back).
        #expect(try await manager.current(replaced).accessToken == "access-1")
        #expect(refresher.refreshCount == 1, "read again, not refreshed again")
    }

    @Test("OIDC clients created on a store holding their first read: the inits await it, the pool keeps running")
    func stalledInit() async throws {
        let store = GatedStore(FaultInjectingStore())
        let stub = try StubProvider { _ in .notFound }
        try await Rules.seed(store, key: StubOIDC.configuration(stub).sessionKey, expiresIn: 3600)
        let reads = store.hold(.load, times: 4)
        let heartbeat = Heartbeat.start()
        let clients = Task {
            try await withThrowingTaskGroup(of: OIDCClient.self) { group in
                for _ in 0..<4 { group.addTask { try await StubOIDC.client(stub, store: store) } }
                return try await group.reduce(into: [OIDCClient]()) { $0.append($1) }
            }
        }
        #expect(await store.held.reached(4), "every init waits on the store")
        #expect(await heartbeat.beats(50), "the pool kept running while 4 inits waited on the store")
        await heartbeat.stop()
        reads.open()
        let created = try await clients.value
        #expect(created.map(\.state.shape) == Array(repeating: "authenticated(alice)", count: 4))
    }
}
