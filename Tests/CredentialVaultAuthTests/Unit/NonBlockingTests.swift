import CredentialVault
import CredentialVaultTesting
import Foundation
import Testing

@testable import CredentialVaultAuth

/// The session manager never blocks its callers' threads on the store: with a store whose
/// calls stall for seconds, the cooperative pool (2 threads here) keeps running, and cancelled
/// callers return at once with `.cancelled`. Timing bounds are loose for a loaded machine; the
/// measured figures are printed.
@Suite("no blocking on a stalled store", .serialized)
struct NonBlockingTests {
    typealias Rules = SessionManagerTests

    /// Starts `count` tasks running `body`, waits until `started` says they all reached the
    /// store, holds them `hold`, then cancels them; returns the heartbeat's worst lag, how long
    /// the cancelled tasks took to return, and their errors.
    static func stallAndCancel(
        _ count: Int, hold: Duration = .milliseconds(500), started: @escaping @Sendable () -> Bool,
        _ body: @escaping @Sendable () async throws(AuthError) -> AuthSession
    ) async throws -> (worstLag: Duration, cancelTime: Duration, errors: [AuthError?]) {
        let heartbeat = Heartbeat.start()
        let tasks = (0..<count).map { _ in
            Task { () -> AuthError? in
                do throws(AuthError) {
                    _ = try await body()
                    return nil
                } catch { return error }
            }
        }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(2)
        while !started() && clock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: hold)
        let cancelled = clock.now
        for task in tasks { task.cancel() }
        var errors: [AuthError?] = []
        for task in tasks { errors.append(await task.value) }
        let cancelTime = clock.now - cancelled
        let beats = await heartbeat.stop()
        let worstLag = heartbeat.longestGap
        print("stalled store: \(count) callers, heartbeat worst lag \(worstLag) over \(beats) beats, cancelled in \(cancelTime)")
        return (worstLag, cancelTime, errors)
    }

    @Test("8 getSession() calls on a store stalling 3 s: the heartbeat keeps beating; cancelled, they return .cancelled at once")
    func stalledReads() async throws {
        let store = FaultInjectingStore()
        let manager = try await Rules.manager(ScriptedRefresher([]), store: store, expiresIn: 3600)
        store.inject(.stall(.seconds(3)), into: .load)
        let loads = store.calls(of: .load)
        let outcome = try await Self.stallAndCancel(8, started: { store.calls(of: .load) >= loads + 8 }) {
            () async throws(AuthError) -> AuthSession in try await manager.getSession()
        }
        #expect(outcome.errors.allSatisfy { $0 == .cancelled })
        #expect(outcome.worstLag < .milliseconds(20))
        #expect(outcome.cancelTime < .milliseconds(50))
        #expect(manager.state.shape == "authenticated(alice)", "a cancelled read says nothing about the session")
    }

    @Test("8 callers sharing one refresh whose write stalls: cancelled, they return at once; the refresh still lands")
    func stalledSharedRefresh() async throws {
        let store = FaultInjectingStore()
        let refresher = ScriptedRefresher([])
        let manager = try await Rules.manager(refresher, store: store, expiresIn: -10)
        store.inject(.stall(.seconds(1)), into: .save, times: 1)
        let outcome = try await Self.stallAndCancel(8, hold: .milliseconds(200), started: { store.calls(of: .save) >= 2 }) {
            () async throws(AuthError) -> AuthSession in try await manager.getSession()
        }
        #expect(outcome.errors.allSatisfy { $0 == .cancelled })
        #expect(outcome.worstLag < .milliseconds(20))
        #expect(outcome.cancelTime < .milliseconds(50))
        #expect(refresher.refreshCount == 1, "one refresh for all")
        // The shared refresh was not cancelled with its callers: the rotated token is persisted.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(3)
        let storage = SessionStorage(store: store, key: Rules.key, options: .default)
        while try await storage.load()?.refreshToken != "refresh-1", clock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try await manager.storedSession()?.refreshToken == "refresh-1")
        #expect(try await manager.getSession().accessToken == "access-1")
    }

    @Test("an OIDC client created on a stalled store: the init awaits, the pool keeps running")
    func stalledInit() async throws {
        let store = FaultInjectingStore()
        let stub = try StubProvider { _ in .notFound }
        try await Rules.seed(store, key: StubOIDC.configuration(stub).sessionKey, expiresIn: 3600)
        store.inject(.stall(.milliseconds(600)), into: .load, times: 4)
        let heartbeat = Heartbeat.start()
        let clients = try await withThrowingTaskGroup(of: OIDCClient.self) { group in
            for _ in 0..<4 { group.addTask { try await StubOIDC.client(stub, store: store) } }
            return try await group.reduce(into: [OIDCClient]()) { $0.append($1) }
        }
        await heartbeat.stop()
        let worstLag = heartbeat.longestGap
        print("stalled init: 4 clients, heartbeat worst lag \(worstLag) over \(heartbeat.count) beats")
        #expect(worstLag < .milliseconds(20))
        #expect(clients.map(\.state.shape) == Array(repeating: "authenticated(alice)", count: 4))
    }
}
