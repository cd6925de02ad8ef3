import Dispatch
import Synchronization

/// A latch a test opens: whatever waits at it (a store call, a provider's answer, a refresh)
/// goes on only once the test says so, so "the callers are waiting on a stalled store" is a
/// fact the test controls, never a duration it hopes is long enough. Waiting tasks can be
/// cancelled (`wait()` then throws `CancellationError` at once, the gate still closed);
/// threads outside the cooperative pool (a stub server's) use `waitBlocking()`.
final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var nextID = 0
        var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
        var blocked: [DispatchSemaphore] = []
    }
    private let state = Mutex(State())

    /// Whether the gate has been opened.
    var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Opens the gate for good: every waiter goes on, and later ones pass at once.
    func open() {
        let (waiters, blocked) = state.withLock { s in
            s.isOpen = true
            defer { s.waiters = [:]; s.blocked = [] }
            return (Array(s.waiters.values), s.blocked)
        }
        for waiter in waiters { waiter.resume(returning: true) }
        for semaphore in blocked { semaphore.signal() }
    }

    /// Waits until the gate is open; throws `CancellationError` as soon as the task is cancelled.
    func wait() async throws {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        let opened = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now = state.withLock { s -> Bool? in
                    if s.isOpen { return true }
                    if Task.isCancelled { return false }
                    s.waiters[id] = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: false)
        }
        if !opened { throw CancellationError() }
    }

    /// Blocks the calling thread (never one of the cooperative pool's) until the gate is open.
    func waitBlocking() {
        let semaphore = DispatchSemaphore(value: 0)
        let open = state.withLock { s -> Bool in
            if !s.isOpen { s.blocked.append(semaphore) }
            return s.isOpen
        }
        if !open { semaphore.wait() }
    }
}
