#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

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
        /// Runs the work and returns what resumes the waiting task. Taken (once) to run it, so
        /// that the closure, and what it holds (a value being saved), is released before the
        /// task resumes: a caller that wipes its copy of a secret then wipes the only copy.
        typealias Work = @Sendable (CancellationFlag) -> @Sendable () -> Void
        let flag = CancellationFlag()
        let abandonable: Bool
        private let work: Mutex<Work?>
        /// Resumes the waiting task with "cancelled" (a job dropped before it started, or abandoned).
        let drop: @Sendable () -> Void
        init(abandonable: Bool, work: @escaping Work, drop: @escaping @Sendable () -> Void) {
            self.abandonable = abandonable
            self.work = Mutex(work)
            self.drop = drop
        }

        /// Runs the work (once), releases it, then resumes the waiting task.
        func perform() {
            let resumption: (@Sendable () -> Void)? = {
                guard let work = self.work.withLock({ $0.take() }) else { return nil }
                return work(flag)
            }()
            resumption?()
        }
    }

    /// The threads of the key derivations and the opening of vaults (Argon2id: up to seconds
    /// and 1 GiB each), shared by every store: at most one per core at once, so that many
    /// concurrent opens queue instead of each taking a thread and its memory.
    package static let keyDerivation = StoreThreads(
        name: "credvault-kdf", limit: max(1, ProcessInfo.processInfo.activeProcessorCount))

    /// The threads of backends that implement only the blocking operations (see
    /// `AsyncTokenStorageAdapter`'s default operations), shared by all of them: up to two per core at
    /// once, started on demand and ended when idle, jobs in submission order. A backend that
    /// blocks for long (a network store without deadlines) holds one of them as long.
    package static let blockingBackends = StoreThreads(
        name: "credvault-backend", limit: max(4, 2 * ProcessInfo.processInfo.activeProcessorCount))

    private struct State {
        /// Jobs in submission order; a slot is emptied as its job starts (or is dropped), so a
        /// job, and what its closure holds (a value being saved), is freed as soon as it is done.
        var queue: [Job?] = []
        var head = 0
        var threads = 0
        var idle = 0
        var submitted = 0
    }

    private let name: String
    private let limit: Int
    private let idleTimeout: Duration
    private let state = Mutex(State())
    /// Wakes idle threads (paired with `state`, see `serve`).
    private let wakeUp = ThreadCondition()

    /// Threads named `name` (seen in `top -H` and debuggers), at most `limit` at once.
    package init(name: String, limit: Int = 1, idleTimeout: Duration = .seconds(5)) {
        self.name = name
        self.limit = max(1, limit)
        self.idleTimeout = idleTimeout
    }

    /// Runs `body` on one of the store's threads and returns its result; the calling task
    /// suspends meanwhile. Throws `cancelled` when the task is cancelled before `body`
    /// started (then `body` never runs); once it has started, `body` sees the cancellation
    /// through its flag and decides (it must leave nothing half-done).
    ///
    /// With `abandonable`, a cancelled task also resumes at once when `body` has started, and
    /// its result is thrown away when it ends: only for work without effects (a key derivation).
    package func run<T: Sendable>(
        abandonable: Bool = false, _ body: @escaping @Sendable (CancellationFlag) throws(CredentialVaultError) -> T
    ) async throws(CredentialVaultError) -> T {
        if Task.isCancelled { throw .cancelled }
        let once = Mutex<CheckedContinuation<Result<T, CredentialVaultError>, Never>?>(nil)
        let resume: @Sendable (Result<T, CredentialVaultError>) -> Void = { result in
            once.withLock { $0.take() }?.resume(returning: result)
        }
        let job = Job(
            abandonable: abandonable,
            work: { flag in
                // Cancelled between its submission and now: it never starts.
                if flag.isCancelled { return { resume(.failure(.cancelled)) } }
                let result: Result<T, CredentialVaultError>
                do throws(CredentialVaultError) { result = .success(try body(flag)) } catch { result = .failure(error) }
                return { resume(result) }
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
            guard !PlainThread.start(stackSize: 1 << 20, { [self] in self.serve() }) else { return }
            // No thread could be started (the process is at its thread limit): a job that no
            // thread will ever run must not leave its task waiting forever.
            let stranded = state.withLock { (s: inout State) -> [Job] in
                s.threads -= 1
                guard s.threads == 0 else { return [] }
                let jobs = s.queue[s.head...].compactMap { $0 }
                s.queue.removeAll()
                s.head = 0
                return jobs
            }
            for job in stranded { job.drop() }
        } else {
            wakeUp.lock()
            wakeUp.signal()
            wakeUp.unlock()
        }
    }

    /// Drops a job that has not started; flags one that has (and abandons it when it may be).
    private func cancel(_ job: Job) {
        let dropped = state.withLock { (s: inout State) -> Bool in
            guard let index = s.queue[s.head...].firstIndex(where: { $0 === job }) else { return false }
            s.queue[index] = nil
            return true
        }
        if dropped { return job.drop() }
        job.flag.cancel()
        if job.abandonable { job.drop() }
    }

    /// The next job to run, its slot emptied; `nil` when none is queued.
    private func next() -> Job? {
        state.withLock { (s: inout State) -> Job? in
            while s.head < s.queue.count {
                let job = s.queue[s.head]
                s.queue[s.head] = nil
                s.head += 1
                if s.head == s.queue.count {
                    s.queue.removeAll(keepingCapacity: true)
                    s.head = 0
                }
                if let job { return job }
            }
            return nil
        }
    }

    private func serve() {
        Self.nameThisThread(name)
        while true {
            if let job = next() {
                Self.currentFlag = job.flag
                job.perform()
                Self.currentFlag = nil
                continue
            }
            // Nothing queued: wait to be woken, and end after `idleTimeout` without work.
            wakeUp.lock()
            let stillEmpty = state.withLock { (s: inout State) -> Bool in
                if s.queue[s.head...].contains(where: { $0 != nil }) { return false }
                s.idle += 1
                return true
            }
            var woken = true
            if stillEmpty { woken = wakeUp.wait(timeout: idleTimeout) }
            wakeUp.unlock()
            let exit = state.withLock { (s: inout State) -> Bool in
                if stillEmpty { s.idle -= 1 }
                guard !woken, !s.queue[s.head...].contains(where: { $0 != nil }) else { return false }
                s.threads -= 1
                return true
            }
            if exit { return }
        }
    }

    /// Gives the calling thread its kernel name (`top -H`, `/proc/PID/task/*/comm`, debuggers):
    /// Foundation's `Thread.name` does not reach it on Linux, and `pthread_setname_np` is not
    /// exported to Swift, so the name (at most 15 bytes) is written to `/proc/thread-self/comm`.
    private static func nameThisThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
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
