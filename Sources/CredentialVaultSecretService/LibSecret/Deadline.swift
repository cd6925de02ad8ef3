import CLibSecret
import CredentialVault
import Dispatch
import Synchronization

/// A `GCancellable` that a timer cancels when the deadline passes, and that the waiting task's
/// cancellation can cancel earlier (`cancel()`).
///
/// libsecret's synchronous calls run their D-Bus round trips on a private main loop and give
/// up as soon as their cancellable is cancelled, from any thread (`g_cancellable_cancel` is
/// thread-safe). Without it, a stopped daemon holds each call for D-Bus's default 25 s, twice.
///
/// Both causes cancel the same cancellable (a libsecret call takes one), so the cause is
/// recorded first: whichever comes first wins, and an interrupted call is reported as
/// `timedOut` after the deadline and as `cancelled` after `cancel()` (`settle(_:)`).
final class Deadline: @unchecked Sendable {
    // @unchecked: the only state is the GCancellable reference, which glib makes thread-safe,
    // the trigger (an atomic), and the timer, behind a Mutex.

    /// The cancellable to pass to every libsecret call of one operation.
    let cancellable: UnsafeMutablePointer<GCancellable>
    /// How long the operation may take.
    let duration: Duration
    /// When the operation's time is up (for waits that are not D-Bus calls, e.g. `KeyLock`).
    var end: ContinuousClock.Instant { timer.withLock { $0.end } }
    private let trigger: Trigger
    /// The pending expiry and when it fires (replaced by `waitingForPerson`).
    private let timer: Mutex<(item: DispatchWorkItem, end: ContinuousClock.Instant)>

    /// Starts the clock: `cancellable` is cancelled `duration` from now.
    /// The longest deadline kept: longer ones ("no timeout", `.seconds(Int64.max)`) are cut to
    /// this, which no clock or timer arithmetic overflows.
    static let longest = Duration.seconds(366 * 86_400)

    init(_ duration: Duration) {
        let duration = Self.bounded(duration)
        self.duration = duration
        let cancellable = g_cancellable_new()!
        self.cancellable = cancellable
        let trigger = Trigger(cancellable)
        self.trigger = trigger
        timer = Mutex(Self.schedule(trigger, after: duration))
    }

    private static func bounded(_ duration: Duration) -> Duration { min(max(duration, .zero), longest) }

    /// A timer that fires `trigger` (as `expired`) `duration` from now.
    private static func schedule(_ trigger: Trigger, after duration: Duration) -> (item: DispatchWorkItem, end: ContinuousClock.Instant) {
        let item = DispatchWorkItem { trigger.fire(.expired) }
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000  // at most ~3.2e16: no overflow
        DispatchQueue.global(qos: .userInitiated).asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: nanoseconds)), execute: item)
        return (item, .now + duration)
    }

    /// Runs `body`, which waits for a person (a provider's dialog), with the operation's
    /// time-out replaced by `limit`; once it returns, the operation gets its whole `duration`
    /// again for what follows (the person's time is not the provider's). `cancel()` still ends
    /// the wait at once. When the time was already up, nothing changes: `body` sees the
    /// cancellation.
    func waitingForPerson<T, E: Error>(_ limit: Duration, _ body: () throws(E) -> T) throws(E) -> T {
        restart(after: Self.bounded(limit))
        defer { restart(after: duration) }
        return try body()
    }

    /// Replaces the pending expiry with one `duration` from now, unless the deadline already fired.
    private func restart(after duration: Duration) {
        timer.withLock { timer in
            guard trigger.cause == .none else { return }
            timer.item.cancel()
            // A timer that was firing just now still wins: the cause is recorded first.
            timer = Self.schedule(trigger, after: duration)
        }
    }

    /// Whether the deadline has passed (the timer cancelled the cancellable).
    var hasExpired: Bool { trigger.cause == .expired }

    /// Whether `cancel()` cancelled the cancellable (before the deadline passed).
    var wasCancelled: Bool { trigger.cause == .cancelled }

    /// Cancels the operation's calls now because the task waiting for it was cancelled (not
    /// because time is up). Safe from any thread, at any time, any number of times: once the
    /// operation is over it changes nothing.
    func cancel() { trigger.fire(.cancelled) }

    /// The error to report for `error`, thrown by an operation under this deadline: a call
    /// interrupted by `cancel()` surfaces from the error mapping as `timedOut` (glib says only
    /// "cancelled", whoever cancelled), which is `cancelled` here. Everything else is
    /// unchanged. Safe because the first cause wins: after `cancel()` the deadline can no
    /// longer fire, so a `timedOut` then never means the time was up.
    func settle(_ error: CredentialVaultError) -> CredentialVaultError {
        if case .timedOut = error, wasCancelled { return .cancelled }
        return error
    }

    /// Stops the timer once the operation is over.
    func finish() { timer.withLock { $0.item.cancel() } }

    deinit {
        finish()
        g_object_unref(cancellable)
    }
}

/// Why a deadline's cancellable was cancelled; keeps the cancellable alive for the timer and
/// the cancellation handler, which may fire after the operation ended.
private final class Trigger: @unchecked Sendable {
    // @unchecked: holds a strong reference to a thread-safe GObject; the cause is an atomic.

    enum Cause: UInt8 {
        case none, expired, cancelled
    }

    private let cancellable: UnsafeMutablePointer<GCancellable>
    private let state = Atomic<UInt8>(Cause.none.rawValue)

    init(_ cancellable: UnsafeMutablePointer<GCancellable>) {
        self.cancellable = cancellable
        g_object_ref(cancellable)
    }

    /// The first cause that fired (`none` until one did).
    var cause: Cause { Cause(rawValue: state.load(ordering: .acquiring)) ?? .none }

    /// Records `cause` unless another came first, then cancels. The cause is stored before
    /// `g_cancellable_cancel`, so a call that sees the cancellation also sees why.
    func fire(_ cause: Cause) {
        let (won, _) = state.compareExchange(
            expected: Cause.none.rawValue, desired: cause.rawValue, ordering: .acquiringAndReleasing)
        if won { g_cancellable_cancel(cancellable) }
    }

    deinit { g_object_unref(cancellable) }
}
