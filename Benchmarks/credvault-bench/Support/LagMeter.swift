import Foundation
import Synchronization

/// A task on Swift's cooperative pool that wakes every `period` and records the longest time
/// between two wake-ups: how long something kept the pool from running it. The tests' heartbeat
/// counts beats (an outcome); this measures the gap (a figure).
final class LagMeter: Sendable {
    private let longest = Mutex(Duration.zero)
    private let task = Mutex<Task<Void, Never>?>(nil)

    private init() {}

    /// Starts waking every `period` on a detached task (Swift's global pool).
    static func start(period: Duration = .milliseconds(1)) -> LagMeter {
        let meter = LagMeter()
        let task = Task.detached { [meter] in
            let clock = ContinuousClock()
            var last = clock.now
            while !Task.isCancelled {
                do { try await Task.sleep(for: period) } catch { break }
                let now = clock.now
                meter.longest.withLock { $0 = max($0, now - last) }
                last = now
            }
        }
        meter.task.withLock { $0 = task }
        return meter
    }

    /// The longest gap since the start or the last `reset()`.
    var longestGap: Duration { longest.withLock { $0 } }

    /// Forgets the gaps seen so far.
    func reset() { longest.withLock { $0 = .zero } }

    /// Stops the task and waits for it.
    func stop() async {
        let task = task.withLock { $0.take() }
        task?.cancel()
        await task?.value
    }
}
