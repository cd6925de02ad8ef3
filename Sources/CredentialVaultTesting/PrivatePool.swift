import Foundation
import Synchronization

/// A task executor with a fixed number of threads of its own: a stand-in for Swift's cooperative
/// pool that no other code shares. The conformance suite runs its non-blocking check on one, so
/// that the check sees only the calls under test (tests running in parallel cannot stop its
/// heartbeat) and a backend that blocks its threads blocks only this pool, not the test run's.
public final class PrivatePool: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs` is guarded by `lock`, the threads only read `self` through it.
    private let lock = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopping = false

    /// Starts `width` threads (default 2, the width of Swift's pool on a 2-core machine).
    public init(width: Int = 2) {
        for index in 0..<max(1, width) {
            let thread = Thread { [self] in work() }
            thread.name = "PrivatePool-\(index)"
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.lock()
        jobs.append(job)
        lock.signal()
        lock.unlock()
    }

    private func work() {
        while true {
            lock.lock()
            while jobs.isEmpty && !stopping { lock.wait() }
            if jobs.isEmpty { lock.unlock(); return }
            let job = jobs.removeFirst()
            lock.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// Lets the threads end once the jobs queued so far have run.
    public func shutdown() {
        lock.lock()
        stopping = true
        lock.broadcast()
        lock.unlock()
    }
}
