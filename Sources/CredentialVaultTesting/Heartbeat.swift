import Foundation
import Synchronization

/// A task that wakes up every `period` on Swift's cooperative pool and records how late each
/// wake-up was: the proof that code under test does not block the pool (a blocked pool thread
/// delays every task, this one included). `worstLag` is the largest lateness seen.
///
/// ```swift
/// let heartbeat = Heartbeat.start()
/// // ... run the code under test ...
/// let lag = await heartbeat.stop()
/// #expect(lag < .milliseconds(20))
/// ```
public final class Heartbeat: Sendable {
    private let worst = Mutex(Duration.zero)
    private let beats = Mutex(0)
    private let task = Mutex<Task<Void, Never>?>(nil)

    private init() {}

    /// Starts beating every `period` (default 5 ms).
    public static func start(period: Duration = .milliseconds(5)) -> Heartbeat {
        let heartbeat = Heartbeat()
        let task = Task.detached { [heartbeat] in
            while !Task.isCancelled {
                let asleep = ContinuousClock.now
                do { try await Task.sleep(for: period) } catch { return }
                let late = ContinuousClock.now - asleep - period
                heartbeat.worst.withLock { $0 = max($0, late) }
                heartbeat.beats.withLock { $0 += 1 }
            }
        }
        heartbeat.task.withLock { $0 = task }
        return heartbeat
    }

    /// The largest lateness so far.
    public var worstLag: Duration { worst.withLock { $0 } }

    /// How many beats so far.
    public var count: Int { beats.withLock { $0 } }

    /// Forgets the lateness and beats seen so far (for example after a baseline).
    public func reset() {
        worst.withLock { $0 = .zero }
        beats.withLock { $0 = 0 }
    }

    /// Stops the heartbeat and returns the largest lateness seen.
    @discardableResult
    public func stop() async -> Duration {
        let task = task.withLock { $0.take() }
        task?.cancel()
        await task?.value
        return worstLag
    }
}
