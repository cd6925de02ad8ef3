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

    /// Starts `count` tasks running `body`.
    static func callers(
        _ count: Int, _ body: @escaping @Sendable () async throws(AuthError) -> AuthSession
    ) -> [Task<AuthError?, Never>] {
        (0..<count).map { _ in
            Task { () -> AuthError? in
                do throws(AuthError) {
                    _ = try await body()
                    return nil
                } catch { return error }
            }
        }
    }

    /// Cancels `tasks` and returns their errors; each must end on its own cancellation (the
    /// ceiling only stops a hang).
    static func cancel(_ tasks: [Task<AuthError?, Never>]) async throws -> [AuthError?] {
        for task in tasks { task.cancel() }
        return try await withCeiling(.seconds(60), "\(tasks.count) cancelled callers") {
            var errors: [AuthError?] = []
            for task in tasks { errors.append(await task.value) }
            return errors
        }
    }

    @Test("8 getSession() calls on a store holding every read: the heartbeat beats; cancelled, they return .cancelled while the reads are held")
    func stalledReads() async throws {
        let store = GatedStore(FaultInjectingStore())
        let manager = try await Rules.manager(ScriptedRefresher([]), store: store, expiresIn: 3600)
        let reads = store.hold(.load)
        let heartbeat = Heartbeat.start()
        let callers = Self.callers(8) { () async throws(AuthError) -> AuthSession in try await manager.getSession() }
        #expect(await store.held.reached(8), "every caller waits on the store")
        #expect(await heartbeat.beats(50), "the pool kept running while 8 callers waited on the store")
        let errors = try await Self.cancel(callers)  // the store still holds the reads: it answers only below
        #expect(errors.allSatisfy { $0 == .cancelled }, "\(errors)")
        await heartbeat.stop()
        reads.open()
        #expect(manager.state.shape == "authenticated(alice)", "a cancelled read says nothing about the session")
    }

    @Test("8 callers sharing one refresh whose write is held: cancelled, they return while it is held; the refresh still lands")
    func stalledSharedRefresh() async throws {
        let store = GatedStore(FaultInjectingStore())
        let refresher = ScriptedRefresher([])
        let manager = try await Rules.manager(refresher, store: store, expiresIn: -10)
        let save = store.hold(.save, times: 1)
        let heartbeat = Heartbeat.start()
        let callers = Self.callers(8) { () async throws(AuthError) -> AuthSession in try await manager.getSession() }
        #expect(await store.held.reached(1), "the shared refresh is saving its result")
        #expect(await heartbeat.beats(50), "the pool kept running while the refresh's write was held")
        let errors = try await Self.cancel(callers)  // the store still holds the write: it answers only below
        #expect(errors.allSatisfy { $0 == .cancelled }, "\(errors)")
        await heartbeat.stop()
        // The shared refresh was not cancelled with its callers: its result is saved and handed
        // out (a cancelled refresh would leave the expired session, and a second refresh).
        save.open()
        #expect(try await manager.getSession().accessToken == "access-1")
        #expect(try await manager.storedSession()?.refreshToken == "refresh-1")
        #expect(refresher.refreshCount == 1, "one refresh for all")
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
