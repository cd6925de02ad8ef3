/// The OpenID Connect side of the session manager: the refresh-token grant at the token
/// endpoint (verifying a returned ID token against the session's user) and RFC 7009 revocation.
struct OIDCRefresher: SessionRefresher {
    let provider: OIDCProvider

    func refresh(_ session: AuthSession) async throws(AuthError) -> AuthSession {
        guard let refreshToken = session.refreshToken else { throw .unsupported("the session has no refresh token") }
        let response = try await provider.token(grant: "refresh_token", [("refresh_token", refreshToken)])
        return try await provider.session(from: response, nonce: nil, requireIDToken: false, previous: session)
    }

    func revoke(_ session: AuthSession) async throws(AuthError) {
        if let refreshToken = session.refreshToken {
            try await provider.revoke(refreshToken, hint: "refresh_token", bearer: session.accessToken)
        }
        try await provider.revoke(session.accessToken, hint: "access_token", bearer: session.accessToken)
    }
}
