import Foundation
import Synchronization

/// Collects what the background browser saw.
final class PageBox: Sendable {
    private let value = Mutex<Result<(status: Int, page: String), any Error>?>(nil)
    private let task = Mutex<Task<Void, Never>?>(nil)

    func set(_ result: Result<(status: Int, page: String), any Error>) { value.withLock { $0 = result } }
    func setTask(_ newTask: Task<Void, Never>) { task.withLock { $0 = newTask } }

    /// Waits for the browser task and returns what it got.
    func result() async throws -> (status: Int, page: String) {
        if let running = task.withLock({ $0 }) { await running.value }
        guard let result = value.withLock({ $0 }) else { throw CancellationError() }
        return try result.get()
    }
}

/// A thread-safe counter/recorder for tests.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
    var count: Int { values.withLock { $0.count } }
}
