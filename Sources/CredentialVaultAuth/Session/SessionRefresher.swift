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
}

extension SessionRefresher {
    /// Does nothing: a provider without revocation.
    public func revoke(_ session: AuthSession) async throws(AuthError) {}
}
