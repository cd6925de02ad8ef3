import Foundation
import Synchronization

/// A count that tasks, threads or callbacks advance (`arrive()`) and a test waits on
/// (`reached(_:)`): the latch that orders a test's steps without sleeping. "All 64 saves have
/// started" is `await started.reached(64)`, never "64 saves and 300 ms".
///
/// The wait is answered by the arriving side, with a ceiling on a Dispatch timer (outside the
/// cooperative pool) that only keeps a broken run from hanging: pass many times what a healthy
/// run needs; `false` means the ceiling passed first.
package final class Arrivals: Sendable {
    private struct Waiter {
        let id: Int
        let target: Int
        let wake: @Sendable (Bool) -> Void
    }
    private struct State {
        var count = 0
        var nextWaiter = 0
        var waiters: [Waiter] = []

        mutating func remove(where predicate: (Waiter) -> Bool) -> [Waiter] {
            let chosen = waiters.filter(predicate)
            waiters.removeAll(where: predicate)
            return chosen
        }
    }
    private let state = Mutex(State())

    package init() {}

    /// How many arrivals so far.
    package var count: Int { state.withLock { $0.count } }

    /// Records one arrival (from any thread or task) and wakes the waits it completes.
    package func arrive() {
        let due = state.withLock { state in
            state.count += 1
            let count = state.count
            return state.remove { $0.target <= count }
        }
        for waiter in due { waiter.wake(true) }
    }

    /// Waits until `count` arrivals in total have happened: `true`, or `false` past `ceiling`.
    package func reached(_ count: Int, ceiling: Duration = .seconds(120)) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            wait(for: count, ceiling: ceiling) { continuation.resume(returning: $0) }
        }
    }

    /// Blocks the calling thread until `count` arrivals, or `false` past `ceiling`. Needs no
    /// task to run, so it is safe on any thread, even when the cooperative pool is starved.
    package func waitBlocking(for count: Int, ceiling: Duration = .seconds(120)) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex(false)
        wait(for: count, ceiling: ceiling) { reached in
            result.withLock { $0 = reached }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }

    /// Registers `wake` for when `count` is reached (or calls it at once); its ceiling runs on a
    /// Dispatch timer. Whoever removes the waiter from the list wakes it, so exactly once.
    private func wait(for count: Int, ceiling: Duration, wake: @escaping @Sendable (Bool) -> Void) {
        let id = state.withLock { state -> Int? in
            guard state.count < count else { return nil }
            let id = state.nextWaiter
            state.nextWaiter += 1
            state.waiters.append(Waiter(id: id, target: count, wake: wake))
            return id
        }
        guard let id else { return wake(true) }
        DispatchQueue.global().asyncAfter(deadline: .now() + ceiling.seconds) { [self] in
            for waiter in state.withLock({ $0.remove { $0.id == id } }) { waiter.wake(false) }
        }
    }
}

extension Duration {
    /// The duration in seconds, for Dispatch and Foundation APIs.
    package var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
