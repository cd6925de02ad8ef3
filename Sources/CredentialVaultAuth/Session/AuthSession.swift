import Foundation

/// A signed-in session: the tokens and who they belong to. Stored as JSON through the
/// application's store; `description` never shows a token.
public struct AuthSession: Sendable, Hashable, Codable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The access token (a Bearer token, or a DPoP-bound one when `isDPoPBound`).
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
    /// The session's DPoP private key (PKCS#8 PEM) when its tokens are DPoP-bound (RFC 9449):
    /// stored inside the session record, so that it lives exactly as long as the session (one
    /// save, one delete, the same store and accessibility) and every process that reads the
    /// session signs with the same key. Never described, never public.
    var dpopKey: String? = nil
    /// The access tokens obtained for resources (RFC 8707) with this session's refresh token,
    /// by resource indicator; `nil` in records written before resource indicators existed.
    var resourceTokenSet: ResourceTokenSet? = nil
    /// Whether the refresh token rotates and whether a resource's refresh narrowed it
    /// (`ResourceChainRules`); `nil` before the first refresh.
    var refreshChain: RefreshChain? = nil

    /// The access tokens this session holds for resources (RFC 8707), by resource indicator
    /// (the canonical URI, `ResourceURI.indicator(_:)`); see `SessionManager.accessToken(for:minTTL:)`.
    public var resourceTokens: [String: ResourceToken] { resourceTokenSet?.tokens ?? [:] }

    /// The stored access token for `resource` (a resource indicator), if any.
    func resourceToken(for resource: String) -> ResourceToken? { resourceTokenSet?[resource] }

    /// This session with `refreshed`'s access token stored as `resource`'s, and its refresh
    /// token, ID token and user (a rotated refresh token continues the one chain every
    /// resource is refreshed from); the main access token is kept.
    func storing(resource: String, from refreshed: AuthSession) -> AuthSession {
        var session = self
        var tokens = resourceTokenSet ?? ResourceTokenSet()
        tokens.store(
            ResourceToken(
                accessToken: refreshed.accessToken, expiresAt: refreshed.expiresAt, scope: refreshed.scope,
                obtainedAt: refreshed.obtainedAt),
            for: resource)
        session.resourceTokenSet = tokens
        session.refreshToken = refreshed.refreshToken ?? refreshToken
        session.idToken = refreshed.idToken ?? idToken
        session.user = refreshed.user ?? user
        return session
    }

    /// Whether the tokens are bound to this session's DPoP key: the access token must then be
    /// sent with `Authorization: DPoP` and a proof (`OIDCClient.authorizationHeaders(for:method:)`),
    /// never as a Bearer token.
    public var isDPoPBound: Bool { dpopKey != nil }

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
            + "refreshToken: \(refreshToken == nil ? "none" : "present")\(isDPoPBound ? ", DPoP-bound" : "")"
            + "\(resourceTokens.isEmpty ? "" : ", \(resourceTokens.count) resource token(s)"), tokens redacted)"
    }

    /// Same as `description`.
    public var debugDescription: String { description }
}
