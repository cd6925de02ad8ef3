import Foundation

/// The one rule that decides when an access token is refreshed, shared by the session
/// manager's background loop and on-demand calls (OpenID and InsForge sessions alike) and by
/// the client credentials cache.
///
/// - A token is *near expiry* when its remaining life is at most `min(margin, lifetime / 2)`:
///   the margin for ordinary tokens, half of its lifetime for a token whose whole lifetime is
///   shorter than twice the margin (the provider's choice, a bogus `expires_in`, or an `exp`
///   already past because of clock skew).
/// - It is *due* when it is near expiry, no refresh started within `floor` before now (at most
///   one refresh per floor, even when the provider keeps answering with tokens that have
///   already expired), and it was not obtained within `floor` unless it has actually expired.
/// - The background loop waits until the token is near expiry; after failures, with
///   exponential backoff (2 s, 4 s, ... 60 s); and never less than `floor`, so no provider
///   answer can make it spin.
///
/// A forced refresh (`forceRefresh`) bypasses the rule.
struct RefreshSchedule: Sendable {
    /// The configured refresh margin.
    let margin: Duration
    /// The shortest time between two refreshes that are not forced.
    let floor: Duration

    /// The remaining life at which `session`'s access token counts as near expiry; `nil` when
    /// its expiry is unknown (never near expiry).
    private func threshold(for session: AuthSession) -> (expiry: Date, seconds: TimeInterval)? {
        guard let expiry = session.expiresAt else { return nil }
        let lifetime = expiry.timeIntervalSince(session.obtainedAt)
        return (expiry, min(margin.secondsValue, max(lifetime, 0) / 2))
    }

    /// Whether `session` should be refreshed now (not forced).
    /// - Parameter lastRefresh: when the caller's previous successful refresh started (`nil`: none known).
    func isDue(_ session: AuthSession, now: Date, lastRefresh: Date?) -> Bool {
        guard let (expiry, threshold) = threshold(for: session) else { return false }
        let remaining = expiry.timeIntervalSince(now)
        guard remaining <= threshold else { return false }
        let floorSeconds = floor.secondsValue
        func recent(_ moment: Date) -> Bool {
            let age = now.timeIntervalSince(moment)
            return age >= 0 && age < floorSeconds
        }
        if let lastRefresh, recent(lastRefresh) { return false }
        if recent(session.obtainedAt) && remaining > 0 { return false }
        return true
    }

    /// The wait before the next background refresh of `session`; `nil` when its expiry is unknown.
    func delay(for session: AuthSession, now: Date, failures: Int) -> Duration? {
        guard let (expiry, threshold) = threshold(for: session) else { return nil }
        let due = expiry.timeIntervalSince(now) - threshold
        let backoff = failures > 0 ? min(Double(1 << min(failures, 6)), 60) : 0
        return .clamped(seconds: max(due, backoff, floor.secondsValue))
    }
}
