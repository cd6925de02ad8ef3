#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Synchronization

/// Runs async work from the synchronous command and waits for it.
package func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    try runBlocking(body, started: { _ in })
}

/// Runs async work from the synchronous command and waits for it, handing `started` the task
/// that runs it (to cancel it from another thread).
package func runBlocking<T: Sendable>(
    _ body: @escaping @Sendable () async throws -> T, started: (Task<Void, Never>) -> Void
) throws -> T {
    let outcome = BlockingOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    let task = Task {
        do { outcome.set(.success(try await body())) } catch { outcome.set(.failure(error)) }
        done.signal()
    }
    started(task)
    done.wait()
    return try outcome.get()
}

private final class BlockingOutcome<T: Sendable>: Sendable {
    private let result = Mutex<Result<T, any Error>?>(nil)
    func set(_ value: Result<T, any Error>) { result.withLock { $0 = value } }
    func get() throws -> T {
        guard let result = result.withLock({ $0 }) else { throw UsageError("internal: no result") }
        return try result.get()
    }
}
