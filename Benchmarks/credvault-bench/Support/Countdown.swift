import Synchronization

/// A count that tasks advance (`arrive()`) and one waiter awaits (`reached(_:)`), answered by
/// the arriving side: "every waiter has started" without polling, which would itself load the
/// pool being measured.
final class Countdown: Sendable {
    private struct State {
        var count = 0
        var waiter: (target: Int, continuation: CheckedContinuation<Void, Never>)?
    }
    private let state = Mutex(State())

    /// Records one arrival and wakes the waiter it completes.
    func arrive() {
        let due = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.count += 1
            guard let waiter = state.waiter, state.count >= waiter.target else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        due?.resume()
    }

    /// Waits until `target` arrivals in total.
    func reached(_ target: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.count >= target { return true }
                state.waiter = (target, continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
