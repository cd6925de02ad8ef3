#if canImport(Glibc)
import Glibc
#endif

/// A mutex and condition variable for the plain threads a store owns (what `NSCondition` gave,
/// which FoundationEssentials lacks), with timed waits on the monotonic clock: a change of the
/// wall clock neither ends an idle wait early nor stretches it.
///
/// `@unchecked Sendable`: the pthread mutex and condition are made for use from many threads;
/// they live at fixed heap addresses (never moved, as a Swift stored property could be) from
/// `init` to `deinit`, and no other state is kept.
final class ThreadCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    /// Wakes one waiting thread (call with the lock held).
    func signal() { pthread_cond_signal(condition) }

    /// Waits (with the lock held) until signalled or `timeout` has passed; `false` on timeout.
    /// A negative or huge timeout is clamped (no arithmetic on it can overflow).
    func wait(timeout: Duration) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        // At most a day: an idle thread's wait, never an overflow of `tv_sec`.
        let (seconds, attoseconds) = min(max(timeout, .zero), .seconds(86_400)).components
        var deadline = timespec(tv_sec: now.tv_sec + Int(seconds), tv_nsec: now.tv_nsec + Int(attoseconds / 1_000_000_000))
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        return pthread_cond_timedwait(condition, mutex, &deadline) != ETIMEDOUT
    }
}
