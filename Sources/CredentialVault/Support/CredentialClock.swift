#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The source of "now" for expiry decisions, injectable so that tests move time instead of sleeping.
public protocol CredentialClock: Sendable {
    /// The current wall-clock time.
    func now() -> Date
}

/// The system's wall clock.
public struct SystemClock: CredentialClock {
    /// Creates the system clock.
    public init() {}
    /// `Date()`.
    public func now() -> Date { Date() }
}

/// A clock that moves only when told to; for tests of expiry.
public final class ManualClock: CredentialClock {
    private let current: Mutex<Date>

    /// Starts at `start` (default: the real current time).
    public init(start: Date = Date()) { current = Mutex(start) }

    /// The clock's current time.
    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock forward.
    public func advance(by duration: Duration) {
        current.withLock { $0 = $0.addingTimeInterval(duration.timeInterval) }
    }
}
