#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Synchronization

/// Runs async work from the synchronous command and waits for it.
public func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = BlockingOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { outcome.set(.success(try await body())) } catch { outcome.set(.failure(error)) }
        done.signal()
    }
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
