import Foundation

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

private final class BlockingOutcome<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, any Error>?
    func set(_ value: Result<T, any Error>) { lock.withLock { result = value } }
    func get() throws -> T {
        guard let result = lock.withLock({ result }) else { throw UsageError("internal: no result") }
        return try result.get()
    }
}
