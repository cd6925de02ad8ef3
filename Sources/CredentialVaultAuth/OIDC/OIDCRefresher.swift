/// The OpenID Connect side of the session manager: the refresh-token grant at the token
/// endpoint (verifying a returned ID token against the session's user) and RFC 7009 revocation.
struct OIDCRefresher: SessionRefresher {
    let provider: OIDCProvider

    func refresh(_ session: AuthSession) async throws(AuthError) -> AuthSession {
        guard let refreshToken = session.refreshToken else { throw .unsupported("the session has no refresh token") }
        let response = try await provider.token(grant: "refresh_token", [("refresh_token", refreshToken)])
        return try await provider.session(from: response, nonce: nil, requireIDToken: false, previous: session)
    }

    /// Revokes the refresh token and the access token; the access token is revoked even when
    /// the refresh token's revocation failed (the first failure is thrown afterwards).
    func revoke(_ session: AuthSession) async throws(AuthError) {
        var failure: AuthError?
        if let refreshToken = session.refreshToken {
            do { try await provider.revoke(refreshToken, hint: "refresh_token", bearer: session.accessToken) } catch { failure = error }
        }
        do { try await provider.revoke(session.accessToken, hint: "access_token", bearer: session.accessToken) } catch {
            failure = failure ?? error
        }
        if let failure { throw failure }
    }
}
