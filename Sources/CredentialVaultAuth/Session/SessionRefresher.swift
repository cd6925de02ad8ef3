/// What the session manager needs from a provider: exchanging a session's refresh token for a
/// new session, and revoking a session at sign-out. The OpenID Connect client implements it
/// with its token and revocation endpoints; other backends (InsForge's `/refresh`) can too.
public protocol SessionRefresher: Sendable {
    /// Exchanges `session`'s refresh token for a new session (with a rotated refresh token when
    /// the provider rotates them). Throws `AuthError.invalidGrant` only when the provider
    /// definitively refused the refresh token; transient failures (`isTransient`) are retried
    /// by the session manager.
    func refresh(_ session: AuthSession) async throws(AuthError) -> AuthSession

    /// Revokes the session's tokens at the provider (best effort, called at sign-out).
    func revoke(_ session: AuthSession) async throws(AuthError)

    /// Exchanges `session`'s refresh token for an access token for `resource` (an RFC 8707
    /// resource indicator) and returns `session` with that token stored for the resource and
    /// the refresh token of the answer (a rotated one replaces it); its main access token is
    /// kept. Throws `invalidTarget` when the provider refused the resource, `invalidGrant`
    /// only when it refused the refresh token.
    func refresh(_ session: AuthSession, resource: String) async throws(AuthError) -> AuthSession

    /// How this provider serves resource indicators from the session's refresh token (default
    /// `.unsupported`): checked before any refresh for a resource.
    var resourceIndicators: ResourceIndicatorSupport { get }
}

extension SessionRefresher {
    /// Does nothing: a provider without revocation.
    public func revoke(_ session: AuthSession) async throws(AuthError) {}

    /// None: a provider without resource indicators.
    public var resourceIndicators: ResourceIndicatorSupport { .unsupported }

    /// Refuses: a provider without resource indicators.
    public func refresh(_ session: AuthSession, resource: String) async throws(AuthError) -> AuthSession {
        throw .unsupported("this provider does not support resource indicators")
    }
}
