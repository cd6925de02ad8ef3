import Synchronization

/// A task on Swift's cooperative pool that sleeps 5 ms in a loop and records how late it woke
/// up: the pool's responsiveness. Any blocking call on a pool thread shows as lateness.
final class Heartbeat: Sendable {
    /// The period of the beat.
    static let period = Duration.milliseconds(5)

    private let worstNanoseconds = Atomic<Int64>(0)
    private let count = Atomic<Int>(0)
    private let running = Atomic<Bool>(true)

    /// The worst lateness since the last `reset()`.
    var worst: Duration { .nanoseconds(worstNanoseconds.load(ordering: .relaxed)) }

    /// How many beats since the last `reset()`.
    var beats: Int { count.load(ordering: .relaxed) }

    /// Starts measuring afresh.
    func reset() {
        worstNanoseconds.store(0, ordering: .relaxed)
        count.store(0, ordering: .relaxed)
    }

    /// Beats until `stop()`.
    func run() async {
        while running.load(ordering: .relaxed) {
            let start = ContinuousClock.now
            try? await Task.sleep(for: Self.period)
            let late = ContinuousClock.now - start - Self.period
            let (seconds, attoseconds) = late.components
            let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
            _ = worstNanoseconds.max(nanoseconds, ordering: .relaxed)
            count.wrappingAdd(1, ordering: .relaxed)
        }
    }

    /// Ends `run()` after its current beat.
    func stop() { running.store(false, ordering: .relaxed) }
}
