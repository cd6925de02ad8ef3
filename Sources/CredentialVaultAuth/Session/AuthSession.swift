import Foundation

/// A signed-in session: the tokens and who they belong to. Stored as JSON through the
/// application's store; `description` never shows a token.
public struct AuthSession: Sendable, Hashable, Codable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The bearer access token.
    public var accessToken: String
    /// The refresh token, if the provider issued one.
    public var refreshToken: String?
    /// The last ID token, if any (kept as `id_token_hint` for sign-out).
    public var idToken: String?
    /// When the access token expires (`nil`: unknown, treated as not expiring).
    public var expiresAt: Date?
    /// The granted scopes, space separated.
    public var scope: String?
    /// Who is signed in.
    public var user: AuthUser?
    /// When this session (these tokens) was obtained.
    public var obtainedAt: Date

    /// Creates a session.
    public init(
        accessToken: String, refreshToken: String? = nil, idToken: String? = nil, expiresAt: Date? = nil,
        scope: String? = nil, user: AuthUser? = nil, obtainedAt: Date = Date()
    ) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.expiresAt = expiresAt
        self.scope = scope
        self.user = user
        self.obtainedAt = obtainedAt
    }

    /// Whether the access token expires within `margin` of `now` (or has expired).
    public func expires(within margin: Duration, of now: Date) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt.timeIntervalSince(now) <= margin.secondsValue
    }

    /// Redacted: the user and the expiry only.
    public var description: String {
        "AuthSession(user: \(user?.description ?? "unknown"), expiresAt: \(expiresAt.map { "\($0)" } ?? "unknown"), "
            + "refreshToken: \(refreshToken == nil ? "none" : "present"), tokens redacted)"
    }

    /// Same as `description`.
    public var debugDescription: String { description }
}
