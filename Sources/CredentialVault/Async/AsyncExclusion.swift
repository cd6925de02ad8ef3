import Synchronization

/// A lock for async code in one process (the session storage of a store without a lock of its
/// own, the fault-injecting store's exclusive access): callers wait their turn by suspending (first come,
/// first served), never by blocking a thread; a cancelled waiter leaves the queue at once with
/// `CredentialVaultError.cancelled`, and one that waits longer than `timeout` gets `busy`, as
/// the stores' exclusive access does. Re-entrant for the task that holds it (and its child
/// tasks); a `Task {}` started inside the body that runs on after it takes the lock anew.
package final class AsyncExclusion: Sendable {
    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var held = false
        var nextID = 0
        var waiters: [Waiter] = []
    }

    /// Marks the holding of one body: `active` until it returns.
    private final class Holding: Sendable {
        let active = Atomic(true)
    }

    private let state = Mutex(State())
    private let timeout: Duration
    @TaskLocal private static var holdings: [ObjectIdentifier: Holding] = [:]

    package init(timeout: Duration = .seconds(10)) { self.timeout = timeout }

    /// Runs `body` holding the lock; throws `CredentialVaultError.busy` past the wait,
    /// `.cancelled` when cancelled while waiting, and what `body` throws.
    package func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        let me = ObjectIdentifier(self)
        if let holding = Self.holdings[me], holding.active.load(ordering: .acquiring) { return try await body() }
        try await acquire()
        let holding = Holding()
        defer {
            holding.active.store(false, ordering: .releasing)
            release()
        }
        var holdings = Self.holdings
        holdings[me] = holding
        return try await Self.$holdings.withValue(holdings) { try await body() }
    }

    private func acquire() async throws(CredentialVaultError) {
        let id = state.withLock { (s: inout State) -> Int in
            s.nextID += 1
            return s.nextID
        }
        // Ends the wait at the timeout (`busy`) or on cancellation, whichever comes first.
        let timer = Task { [timeout] in
            try? await Task.sleep(for: timeout)
            self.abandon(id)
        }
        defer { timer.cancel() }
        let granted = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                // Cancelled before it queued (the handler found nothing to abandon): it never does.
                let now = state.withLock { (s: inout State) -> Bool? in
                    if !s.held {
                        s.held = true
                        return true
                    }
                    if Task.isCancelled { return false }
                    s.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            abandon(id)
        }
        if !granted { throw Task.isCancelled ? .cancelled : .busy }
    }

    /// Takes waiter `id` out of the queue, resuming it ungranted (if it is still waiting).
    private func abandon(_ id: Int) {
        let waiter = state.withLock { (s: inout State) -> Waiter? in
            guard let index = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return s.waiters.remove(at: index)
        }
        waiter?.continuation.resume(returning: false)
    }

    private func release() {
        let next = state.withLock { (s: inout State) -> Waiter? in
            if s.waiters.isEmpty {
                s.held = false
                return nil
            }
            return s.waiters.removeFirst()
        }
        next?.continuation.resume(returning: true)
    }
}
