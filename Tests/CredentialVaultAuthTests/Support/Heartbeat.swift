import Foundation
import Synchronization

/// A task on the cooperative pool that wakes every `period` and records how late it woke: if
/// anything blocks the pool's threads (2 on a 2-core machine), the lag shows it.
final class Heartbeat: Sendable {
    private let stats = Mutex((worstLag: Duration.zero, beats: 0))
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Starts beating.
    static func start(period: Duration = .milliseconds(5)) -> Heartbeat {
        let heartbeat = Heartbeat()
        let running = Task {
            let clock = ContinuousClock()
            while !Task.isCancelled {
                let start = clock.now
                do { try await Task.sleep(for: period) } catch { return }
                let lag = clock.now - start - period
                heartbeat.stats.withLock { $0 = (max($0.worstLag, lag), $0.beats + 1) }
            }
        }
        heartbeat.task.withLock { $0 = running }
        return heartbeat
    }

    /// Stops beating; returns the worst lag and the number of beats.
    func stop() async -> (worstLag: Duration, beats: Int) {
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
        return stats.withLock { $0 }
    }
}
