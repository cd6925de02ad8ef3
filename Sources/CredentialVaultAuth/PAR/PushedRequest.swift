import Foundation

/// An authorization request the provider accepted by PAR: the browser goes to the
/// authorization endpoint with `client_id` and `requestURI` only, before the request URI expires.
struct PushedRequest: Sendable {
    /// The provider's reference to the pushed parameters.
    let requestURI: String
    /// When the request URI expires by the client's clock (counted from before the push was
    /// sent, so never later than the provider's own expiry).
    let expiresAt: Date
    /// The latest moment (monotonic) the browser may still be sent to the provider: the
    /// expiry less a little time for the browser to get there.
    let openBy: ContinuousClock.Instant

    /// The time the browser is given to reach the provider once sent: a second, or a quarter
    /// of a very short lifetime.
    static func travelMargin(lifetime: TimeInterval) -> Duration {
        min(.seconds(1), .clamped(seconds: lifetime / 4))
    }
}
