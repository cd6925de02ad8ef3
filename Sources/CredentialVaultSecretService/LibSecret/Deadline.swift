import CLibSecret
import Dispatch

/// A `GCancellable` that a timer cancels when the deadline passes.
///
/// libsecret's synchronous calls run their D-Bus round trips on a private main loop and give
/// up as soon as their cancellable is cancelled, from any thread (`g_cancellable_cancel` is
/// thread-safe). Without it, a stopped daemon holds each call for D-Bus's default 25 s, twice.
final class Deadline: @unchecked Sendable {
    // @unchecked: the only state is the GCancellable reference, which glib makes thread-safe,
    // and the timer, which is only cancelled.

    /// The cancellable to pass to every libsecret call of one operation.
    let cancellable: UnsafeMutablePointer<GCancellable>
    /// How long the operation may take.
    let duration: Duration
    /// When the operation's time is up (for waits that are not D-Bus calls, e.g. `KeyLock`).
    let end: ContinuousClock.Instant
    private let timer: DispatchWorkItem

    /// Starts the clock: `cancellable` is cancelled `duration` from now.
    init(_ duration: Duration) {
        self.duration = duration
        end = .now + duration
        let cancellable = g_cancellable_new()!
        self.cancellable = cancellable
        let box = CancellableReference(cancellable)
        timer = DispatchWorkItem { box.cancel() }
        let (seconds, attoseconds) = duration.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        DispatchQueue.global(qos: .userInitiated).asyncAfter(
            deadline: .now() + .nanoseconds(Int(clamping: nanoseconds)), execute: timer)
    }

    /// Whether the deadline has passed (the cancellable was cancelled).
    var hasExpired: Bool { g_cancellable_is_cancelled(cancellable) != 0 }

    /// Stops the timer once the operation is over.
    func finish() { timer.cancel() }

    deinit {
        timer.cancel()
        g_object_unref(cancellable)
    }
}

/// Keeps the cancellable alive for the timer, which may fire after the operation ended.
private final class CancellableReference: @unchecked Sendable {
    // @unchecked: holds a strong reference to a thread-safe GObject.
    private let cancellable: UnsafeMutablePointer<GCancellable>

    init(_ cancellable: UnsafeMutablePointer<GCancellable>) {
        self.cancellable = cancellable
        g_object_ref(cancellable)
    }

    func cancel() { g_cancellable_cancel(cancellable) }

    deinit { g_object_unref(cancellable) }
}
