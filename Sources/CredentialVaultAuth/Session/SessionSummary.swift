import Foundation

/// What an app may show about a signed-in session: who and until when. No tokens.
public struct SessionSummary: Sendable, Hashable, CustomStringConvertible {
    /// Who is signed in, when the provider described them.
    public var user: AuthUser?
    /// When the access token expires (`nil`: unknown, treated as not expiring).
    public var expiresAt: Date?
    /// Whether the session has a refresh token (it can outlive its access token).
    public var isRefreshable: Bool

    /// Creates a summary.
    public init(user: AuthUser?, expiresAt: Date?, isRefreshable: Bool) {
        self.user = user
        self.expiresAt = expiresAt
        self.isRefreshable = isRefreshable
    }

    /// The summary of `session`.
    public init(_ session: AuthSession) {
        self.init(user: session.user, expiresAt: session.expiresAt, isRefreshable: session.refreshToken != nil)
    }

    /// Whether the session can give a valid access token at `now` without signing in again:
    /// its access token is still valid, or it can be refreshed.
    public func isUsable(at now: Date) -> Bool {
        isRefreshable || (expiresAt.map { $0 > now } ?? true)
    }

    /// The user and the expiry.
    public var description: String {
        "\(user?.description ?? "unknown user"), expires \(expiresAt.map { "\($0)" } ?? "never")"
            + (isRefreshable ? ", refreshable" : "")
    }
}
