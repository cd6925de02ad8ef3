import Foundation
import Synchronization

/// A task that wakes up every `period` on Swift's cooperative pool and counts its beats: the
/// proof that code under test does not block the pool. A blocked pool runs no task, this one
/// included, so a test states the property as an outcome, never as a latency:
///
/// ```swift
/// let heartbeat = Heartbeat.start()
/// // ... start the operations under test, make sure they are waiting ...
/// #expect(await heartbeat.beats(50), "the pool kept running while they waited")
/// ```
///
/// `beats(_:)` is answered by the heartbeat's own task (no polling), with a ceiling that only
/// stops a test from hanging forever when the pool really is blocked. `longestGap` (the largest
/// time between two beats) is a measurement for benchmarks; a test compares it only with
/// `blockedPoolBound`, seconds away from both a free pool and a blocked one.
public final class Heartbeat: Sendable {
    private struct Waiter {
        let id: Int
        let target: Int
        let continuation: CheckedContinuation<Bool, Never>
    }
    private struct State {
        var beats = 0
        var longestGap = Duration.zero
        var nextWaiter = 0
        var waiters: [Waiter] = []

        /// Removes and returns the waiters `predicate` selects: whoever removes a waiter resumes it,
        /// so each is resumed exactly once (by a beat, its ceiling or `stop`).
        mutating func remove(where predicate: (Waiter) -> Bool) -> [Waiter] {
            let chosen = waiters.filter(predicate)
            waiters.removeAll(where: predicate)
            return chosen
        }
    }
    private let state = Mutex(State())
    private let task = Mutex<Task<Void, Never>?>(nil)

    private init() {}

    /// Starts beating every `period` (default 1 ms) on a detached task, on `executor` when one
    /// is given (a `PrivatePool` shared with the calls under test), else on Swift's pool.
    public static func start(period: Duration = .milliseconds(1), on executor: (any TaskExecutor)? = nil) -> Heartbeat {
        let heartbeat = Heartbeat()
        let task = Task.detached(executorPreference: executor) { [heartbeat] in
            var last = ContinuousClock.now
            while !Task.isCancelled {
                do { try await Task.sleep(for: period) } catch { break }
                let now = ContinuousClock.now
                heartbeat.beat(gap: now - last)
                last = now
            }
        }
        heartbeat.task.withLock { $0 = task }
        return heartbeat
    }

    private func beat(gap: Duration) {
        let due = state.withLock { state in
            state.beats += 1
            state.longestGap = max(state.longestGap, gap)
            let count = state.beats
            return state.remove { $0.target <= count }
        }
        for waiter in due { waiter.continuation.resume(returning: true) }
    }

    /// How many beats so far.
    public var count: Int { state.withLock { $0.beats } }

    /// The longest time between two beats so far (a measurement: benchmarks report it).
    public var longestGap: Duration { state.withLock { $0.longestGap } }

    /// Forgets the longest gap seen so far (for example after a baseline).
    public func resetLongestGap() { state.withLock { $0.longestGap = .zero } }

    /// Waits until the heartbeat has beaten `count` more times than when called: `true` when it
    /// did, `false` when `ceiling` passed first or the heartbeat was stopped. The ceiling runs on
    /// a Dispatch timer, outside the cooperative pool, and exists only so that a blocked pool
    /// fails the test instead of hanging it: pass many times what a healthy run needs.
    public func beats(_ count: Int, ceiling: Duration = .seconds(120)) async -> Bool {
        guard count > 0 else { return true }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let id = state.withLock { state in
                let id = state.nextWaiter
                state.nextWaiter += 1
                state.waiters.append(Waiter(id: id, target: state.beats + count, continuation: continuation))
                return id
            }
            let seconds = Double(ceiling.components.seconds) + Double(ceiling.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + max(0, seconds)) { [self] in
                for waiter in state.withLock({ $0.remove { $0.id == id } }) { waiter.continuation.resume(returning: false) }
            }
        }
    }

    /// The longest gap `longestGap(whileRunning:)` may report for calls that do not block their
    /// threads. A blocked pool stops the heartbeat for as long as the calls queued before its
    /// wake-up take: about 6 s with the careless backend of ConformanceCanFailTests (0.2 s a
    /// call, 64 calls on 2 threads). A free pool answers within milliseconds on a quiet machine,
    /// but CPU-bound crypto under ASan on a loaded 2-core machine (CI beside two builds) measured
    /// 1.03 s once: the bound sits between the two, far from both.
    public static let blockedPoolBound: Duration = .seconds(3)

    /// Runs `body` on a `PrivatePool` of its own beside a heartbeat, and returns its result with
    /// the heartbeat's longest gap while it ran. Nothing else in the process shares that pool, so
    /// the gap is the calls' doing alone: code that blocks its threads stops the heartbeat for
    /// as long as the calls queued before it take (seconds), a free pool for milliseconds.
    public static func longestGap<T: Sendable>(
        whileRunning body: @escaping @Sendable () async throws -> T
    ) async throws -> (result: T, longestGap: Duration) {
        let pool = PrivatePool()
        defer { pool.shutdown() }
        let heartbeat = Heartbeat.start(on: pool)
        _ = await heartbeat.beats(5)
        heartbeat.resetLongestGap()
        let result = try await withTaskExecutorPreference(pool) { try await body() }
        await heartbeat.stop()
        return (result, heartbeat.longestGap)
    }

    /// Stops the heartbeat and returns how many times it beat.
    @discardableResult
    public func stop() async -> Int {
        let task = task.withLock { $0.take() }
        task?.cancel()
        await task?.value
        for waiter in state.withLock({ $0.remove { _ in true } }) { waiter.continuation.resume(returning: false) }
        return count
    }
}
