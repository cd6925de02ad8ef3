import Foundation

/// Measures waiting without blocking: `count` waiters are started beside a `LagMeter`; once all
/// have started (each arrives at the `Countdown` when its wait begins) and `window` has passed,
/// they are cancelled. A run gives the meter's longest gap from the start to the last answer
/// (the heartbeat's worst lag) and the time from the cancellation to the last answer.
enum WaitTimer {
    /// A waiter: index, the countdown to arrive at when its wait begins; returns whether it
    /// ended `cancelled` (anything else makes the run fail).
    typealias Waiter = @Sendable (Int, Countdown) async -> Bool

    /// The floor: a task asleep for an hour, cancelled (Swift's own cost of waking `count`
    /// cancelled tasks, and the heartbeat's lag with nothing blocking).
    static let asleep: Waiter = { _, started in
        started.arrive()
        do { try await Task.sleep(for: .seconds(3600)) } catch { return true }
        return false
    }

    /// Runs `plan.runs` runs of the floor and of `waiter` in turn (A B, B A, ...); `prepare`
    /// runs (untimed) before each run of `waiter`, `finish` after it. Returns per-run samples
    /// (nanoseconds): the floor's lag and cancellation, then the waiter's.
    static func measure(
        _ plan: Plan, count: Int, window: Duration = .milliseconds(50), prepare: () async throws -> Countdown = { Countdown() },
        finish: () async throws -> Void = {}, _ waiter: @escaping @Sendable (Int, Countdown) async -> Bool
    ) async throws -> (floorLag: Sample, floorCancel: Sample, lag: Sample, cancel: Sample) {
        var lags: [[Double]] = [[], []]
        var cancels: [[Double]] = [[], []]
        for round in 0..<(plan.warmup + plan.runs) {
            for index in round % 2 == 0 ? [0, 1] : [1, 0] {
                let started = index == 0 ? Countdown() : try await prepare()
                let (lag, cancel) = try await run(count: count, window: window, started: started, index == 0 ? asleep : waiter)
                if index == 1 { try await finish() }
                guard round >= plan.warmup else { continue }
                lags[index].append(lag.nanoseconds)
                cancels[index].append(cancel.nanoseconds)
            }
        }
        return (
            Sample(perOpNanos: lags[0], iterations: 1), Sample(perOpNanos: cancels[0], iterations: 1),
            Sample(perOpNanos: lags[1], iterations: 1), Sample(perOpNanos: cancels[1], iterations: 1)
        )
    }

    private static func run(count: Int, window: Duration, started: Countdown, _ waiter: @escaping Waiter) async throws -> (Duration, Duration) {
        let meter = LagMeter.start()
        try await Task.sleep(for: .milliseconds(10))
        meter.reset()
        let tasks = (0..<count).map { index in Task { await waiter(index, started) } }
        await started.reached(count)
        try await Task.sleep(for: window)
        let clock = ContinuousClock()
        let cancelled = clock.now
        for task in tasks { task.cancel() }
        var ended = 0
        for task in tasks where await task.value { ended += 1 }
        let cancel = cancelled.duration(to: clock.now)
        let lag = meter.longestGap
        await meter.stop()
        guard ended == count else { throw BenchError("\(count - ended) of \(count) waiters did not end cancelled") }
        return (lag, cancel)
    }
}
