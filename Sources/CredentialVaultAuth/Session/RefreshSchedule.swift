import Foundation

/// When the background refresh runs next. Normally when the access token enters the refresh
/// margin; for a token whose whole lifetime is shorter than the margin (the provider's choice,
/// or a bogus `expires_in`), at half of its lifetime; after failures, with exponential backoff
/// (2 s, 4 s, ... 60 s); and never sooner than `floor` after the previous look, so no
/// provider answer can make the loop spin.
struct RefreshSchedule: Sendable {
    /// The configured refresh margin.
    let margin: Duration
    /// The shortest wait between two background refreshes.
    let floor: Duration

    /// The wait before the next background refresh of `session`; `nil` when its expiry is unknown.
    func delay(for session: AuthSession, now: Date, failures: Int) -> Duration? {
        guard let expiry = session.expiresAt else { return nil }
        let remaining = expiry.timeIntervalSince(now)
        let lifetime = expiry.timeIntervalSince(session.obtainedAt)
        let marginSeconds = margin.secondsValue
        let due = lifetime > marginSeconds ? remaining - marginSeconds : remaining - max(lifetime, 0) / 2
        let backoff = failures > 0 ? min(Double(1 << min(failures, 6)), 60) : 0
        return .clamped(seconds: max(due, backoff, floor.secondsValue))
    }
}
