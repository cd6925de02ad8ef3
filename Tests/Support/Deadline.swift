import Foundation
import Testing


/// Runs `body` on a thread of its own and waits for it at most `limit`: a call that hangs (a
/// blocking `open` of a FIFO) is recorded as an issue instead of hanging the suite. `unblock`
/// then runs, to release the stuck thread (for example by opening the FIFO's other end).
/// Returns the body's result, or `nil` past the deadline.
package func withinDeadline<T: Sendable>(
    _ limit: Duration, _ what: String, unblock: @escaping @Sendable () -> Void = {}, _ body: @escaping @Sendable () -> T
) -> T? {
    let box = DeadlineBox<T>()
    Thread.detachNewThread {
        box.value = body()
        box.done.signal()
    }
    if box.done.wait(timeout: .now() + limit.seconds) == .success { return box.value }
    Issue.record("\(what) did not return within \(limit)")
    unblock()
    _ = box.done.wait(timeout: .now() + 5)
    return nil
}

/// The result of `withinDeadline`'s thread, published by its semaphore.
private final class DeadlineBox<T>: @unchecked Sendable {
    package var value: T?
    package let done = DispatchSemaphore(value: 0)
}
