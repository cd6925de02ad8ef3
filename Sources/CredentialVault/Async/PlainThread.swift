#if canImport(Glibc)
import Glibc
#endif

/// Starts detached POSIX threads (what Foundation's `Thread` gave, which FoundationEssentials
/// lacks) for the work a store owns.
package enum PlainThread {
    /// The closure handed to the new thread (retained across `pthread_create`).
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Runs `body` on a new detached thread with a stack of `stackSize` bytes. Returns `false`
    /// when the system refuses a thread (then `body` never runs and the caller must not wait
    /// for it).
    @discardableResult
    package static func start(stackSize: Int = 1 << 20, _ body: @escaping @Sendable () -> Void) -> Bool {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, max(stackSize, Int(PTHREAD_STACK_MIN)))
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(&thread, &attributes, { raw in
            guard let raw else { return nil }
            Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, context)
        if started != 0 { Unmanaged<Body>.fromOpaque(context).release() }
        return started == 0
    }

    /// Blocks the calling (non-cooperative) thread for `duration` (clamped to zero .. one hour).
    package static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = min(max(duration, .zero), .seconds(3_600)).components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
