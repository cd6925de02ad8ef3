import Foundation
import Synchronization

/// Threads a store owns for its blocking work (file I/O with `fdatasync`, D-Bus calls, later
/// libpq), so that the async API never blocks Swift's cooperative pool or the main actor: the
/// caller suspends while the work runs here.
///
/// Up to `limit` threads are started on demand; one that has had nothing to do for
/// `idleTimeout` ends (a store that is no longer used keeps no thread). Jobs run in the order
/// they were submitted. Cancelling the waiting task drops a job that has not started (the task
/// resumes at once with `cancelled`) and sets the `CancellationFlag` of one that has, which the
/// work polls or turns into an interrupt (its own deadline still holds either way).
package final class StoreThreads: Sendable {
    private final class Job: Sendable {
        let flag = CancellationFlag()
        let work: @Sendable (CancellationFlag) -> Void
        /// Resumes the waiting task with "cancelled" when the job is dropped before it started.
        let drop: @Sendable () -> Void
        init(work: @escaping @Sendable (CancellationFlag) -> Void, drop: @escaping @Sendable () -> Void) {
            self.work = work
            self.drop = drop
        }
    }

    private struct State {
        var queue: [Job] = []
        var head = 0
        var threads = 0
        var idle = 0
        var submitted = 0
    }

    private let name: String
    private let limit: Int
    private let idleTimeout: TimeInterval
    private let state = Mutex(State())
    /// Wakes idle threads (paired with `state`, see `serve`).
    private let wakeUp = NSCondition()

    /// Threads named `name` (seen in `top -H` and debuggers), at most `limit` at once.
    package init(name: String, limit: Int = 1, idleTimeout: Duration = .seconds(5)) {
        self.name = name
        self.limit = max(1, limit)
        self.idleTimeout = idleTimeout.timeInterval
    }

    /// Runs `body` on one of the store's threads and returns its result; the calling task
    /// suspends meanwhile. Throws `cancelled` when the task is cancelled before `body`
    /// started (then `body` never runs); once it has started, `body` sees the cancellation
    /// through its flag and decides (it must leave nothing half-done).
    package func run<T: Sendable>(
        _ body: @escaping @Sendable (CancellationFlag) throws(CredentialVaultError) -> T
    ) async throws(CredentialVaultError) -> T {
        if Task.isCancelled { throw .cancelled }
        let once = Mutex<CheckedContinuation<Result<T, CredentialVaultError>, Never>?>(nil)
        let resume: @Sendable (Result<T, CredentialVaultError>) -> Void = { result in
            once.withLock { $0.take() }?.resume(returning: result)
        }
        let job = Job(
            work: { flag in
                // Cancelled between its submission and now: it never starts.
                if flag.isCancelled { return resume(.failure(.cancelled)) }
                let result: Result<T, CredentialVaultError>
                do throws(CredentialVaultError) { result = .success(try body(flag)) } catch { result = .failure(error) }
                resume(result)
            },
            drop: { resume(.failure(.cancelled)) })
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, CredentialVaultError>, Never>) in
                once.withLock { $0 = continuation }
                submit(job)
            }
        } onCancel: {
            cancel(job)
        }
        return try result.get()
    }

    /// Runs `body` on a thread of its own, started for it and ended after it (for work that
    /// belongs to no store yet: opening a vault, a key derivation).
    package static func detached<T: Sendable>(
        name: String, _ body: @escaping @Sendable (CancellationFlag) throws(CredentialVaultError) -> T
    ) async throws(CredentialVaultError) -> T {
        try await StoreThreads(name: name, limit: 1, idleTimeout: .zero).run(body)
    }

    /// How many jobs were ever submitted (tests check that a cache hit submitted none).
    package var submittedJobs: Int { state.withLock { $0.submitted } }

    private func submit(_ job: Job) {
        let startThread = state.withLock { (s: inout State) -> Bool in
            s.queue.append(job)
            s.submitted += 1
            if s.idle > 0 { return false }
            guard s.threads < limit else { return false }
            s.threads += 1
            return true
        }
        if startThread {
            let thread = Thread { [self] in self.serve() }
            thread.name = name
            thread.stackSize = 1 << 20
            thread.start()
        } else {
            wakeUp.lock()
            wakeUp.signal()
            wakeUp.unlock()
        }
    }

    /// Drops a job that has not started; flags one that has.
    private func cancel(_ job: Job) {
        let dropped = state.withLock { (s: inout State) -> Bool in
            guard let index = s.queue[s.head...].firstIndex(where: { $0 === job }) else { return false }
            s.queue.remove(at: index)
            return true
        }
        if dropped { job.drop() } else { job.flag.cancel() }
    }

    private func next() -> Job? {
        state.withLock { (s: inout State) -> Job? in
            guard s.head < s.queue.count else { return nil }
            let job = s.queue[s.head]
            s.head += 1
            if s.head > 64 && s.head * 2 > s.queue.count {
                s.queue.removeFirst(s.head)
                s.head = 0
            }
            return job
        }
    }

    private func serve() {
        while true {
            if let job = next() {
                Self.currentFlag = job.flag
                job.work(job.flag)
                Self.currentFlag = nil
                continue
            }
            // Nothing queued: wait to be woken, and end after `idleTimeout` without work.
            wakeUp.lock()
            let stillEmpty = state.withLock { (s: inout State) -> Bool in
                if s.head < s.queue.count { return false }
                s.idle += 1
                return true
            }
            var woken = true
            if stillEmpty { woken = wakeUp.wait(until: Date(timeIntervalSinceNow: idleTimeout)) }
            wakeUp.unlock()
            let exit = state.withLock { (s: inout State) -> Bool in
                if stillEmpty { s.idle -= 1 }
                guard !woken, s.head >= s.queue.count else { return false }
                s.threads -= 1
                return true
            }
            if exit { return }
        }
    }

    /// The flag of the job running on this thread.
    private static let flags = ThreadFlags()
    static var currentFlag: CancellationFlag? {
        get { flags.value }
        set { flags.value = newValue }
    }
}

/// A per-thread slot for the running job's flag (pthread-specific data: store threads are
/// plain threads, not tasks, so a task-local would not reach them).
private final class ThreadFlags: Sendable {
    private let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    var value: CancellationFlag? {
        get { pthread_getspecific(key).map { Unmanaged<CancellationFlag>.fromOpaque($0).takeUnretainedValue() } }
        set {
            if let old = pthread_getspecific(key) { Unmanaged<CancellationFlag>.fromOpaque(old).release() }
            pthread_setspecific(key, newValue.map { UnsafeRawPointer(Unmanaged.passRetained($0).toOpaque()) })
        }
    }
}
