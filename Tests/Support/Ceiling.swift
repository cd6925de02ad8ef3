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
    let task = Task { try await body() }
    let passed = Mutex(false)
    let timer = DispatchWorkItem {
        passed.withLock { $0 = true }
        task.cancel()
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + ceiling.seconds, execute: timer)
    defer { timer.cancel() }
    let result = await task.result
    if passed.withLock({ $0 }) { throw CeilingPassed(what: what, ceiling: ceiling) }
    return try result.get()
}
