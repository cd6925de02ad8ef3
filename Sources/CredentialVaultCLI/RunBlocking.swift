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
    let outcome = BlockingOutcome<T>(body)
    let done = DispatchSemaphore(value: 0)
    let task = Task {
        await outcome.run()
        // Only now, with the work's closure (and what it captured: a migration's stores) released,
        // may the caller go on: signalled earlier, the command could return and the process exit
        // while the task still held them, which LeakSanitizer reports as lost now and then.
        done.signal()
    }
    started(task)
    done.wait()
    return try outcome.get()
}

/// The work and then its result: the work is taken out (and so released) when it ran.
private final class BlockingOutcome<T: Sendable>: Sendable {
    private let body: Mutex<(@Sendable () async throws -> T)?>
    private let result = Mutex<Result<T, any Error>?>(nil)

    init(_ body: @escaping @Sendable () async throws -> T) { self.body = Mutex(body) }

    /// Runs the work once; the closure is dropped before this returns.
    func run() async {
        guard let work = body.withLock({ $0.take() }) else { return }
        let value: Result<T, any Error>
        do { value = .success(try await work()) } catch { value = .failure(error) }
        result.withLock { $0 = value }
    }

    func get() throws -> T {
        guard let result = result.withLock({ $0 }) else { throw UsageError("internal: no result") }
        return try result.get()
    }
}
