import Foundation
import Synchronization

/// What `withCeiling` throws when its body is still running at the ceiling.
package struct CeilingPassed: Error, CustomStringConvertible {
    /// What was waited for.
    package let what: String
    /// The ceiling that passed.
    package let ceiling: Duration
    package var description: String { "\(what) was still running after \(ceiling): it hangs" }
}

/// Runs `body` and waits for it at most `ceiling`: a "never hangs" check. The ceiling is many
/// times the deadline under test (it states that a wait ended at all, not how fast), measured on
/// a Dispatch timer outside the cooperative pool. Past it the body's task is cancelled and
/// `CeilingPassed` is thrown.
@discardableResult
package func withCeiling<T: Sendable>(
    _ ceiling: Duration = .seconds(120), _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    // `state`: 0 running, 1 finished, 2 past the ceiling. The body marks itself finished as it
    // ends, so a ceiling reached while a finished body waits to resume its caller (a starved
    // pool) is not a hang.
    let state = CeilingState()
    let task = Task {
        defer { state.value.withLock { if $0 == 0 { $0 = 1 } } }
        return try await body()
    }
    let timer = DispatchWorkItem {
        guard state.value.withLock({ state -> Bool in
            guard state == 0 else { return false }
            state = 2
            return true
        }) else { return }
        task.cancel()
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + ceiling.seconds, execute: timer)
    defer { timer.cancel() }
    let result = await task.result
    if state.value.withLock({ $0 }) == 2 { throw CeilingPassed(what: what, ceiling: ceiling) }
    return try result.get()
}

/// Where `withCeiling`'s body and timer meet.
private final class CeilingState: Sendable {
    let value = Mutex(0)
}
