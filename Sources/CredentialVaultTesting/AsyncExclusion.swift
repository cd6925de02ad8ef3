import Synchronization

/// A lock for async code in one process: callers wait their turn by suspending (first come,
/// first served), never by blocking a thread. Re-entrant for the task that holds it, like the
/// stores' exclusive access.
final class AsyncExclusion: Sendable {
    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    @TaskLocal private static var holding: Set<ObjectIdentifier> = []

    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        let me = ObjectIdentifier(self)
        if Self.holding.contains(me) { return try await body() }
        await acquire()
        defer { release() }
        var holding = Self.holding
        holding.insert(me)
        return try await Self.$holding.withValue(holding) { try await body() }
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { (s: inout State) -> Bool in
                if !s.held {
                    s.held = true
                    return true
                }
                s.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { (s: inout State) -> CheckedContinuation<Void, Never>? in
            if s.waiters.isEmpty {
                s.held = false
                return nil
            }
            return s.waiters.removeFirst()
        }
        next?.resume()
    }
}
