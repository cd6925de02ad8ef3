/// The OpenID Connect side of the session manager: the refresh-token grant at the token
/// endpoint (verifying a returned ID token against the session's user) and RFC 7009 revocation.
struct OIDCRefresher: SessionRefresher {
    let provider: OIDCProvider

    /// A session without a DPoP key when the configuration asks for DPoP-bound tokens.
    static let notDPoPBound = AuthError.unsupported(
        "the stored session is not DPoP-bound (signed in without DPoP) but DPoP is configured: sign in again")

    var resourceIndicators: ResourceIndicatorSupport {
        provider.configuration.rotatedRefreshTokensKeepResources ? .rotatedTokensKeepResources : .rotatedTokensMayNarrow
    }

    func refresh(_ session: AuthSession) async throws(AuthError) -> AuthSession {
        // The MCP profile's main token is a resource's: each refresh names it (RFC 8707).
        try await refresh(session, extra: try provider.configuration.sessionResourceParameter())
    }

    func refresh(_ session: AuthSession, resource: String) async throws(AuthError) -> AuthSession {
        do {
            // The token is stored under the resource asked for: the answer's audience is the
            // provider's business (a client does not parse access tokens).
            return session.storing(resource: resource, from: try await refresh(session, extra: [("resource", resource)]))
        } catch .invalidTarget {
            throw .invalidTarget(resource: resource)
        }
    }

    private func refresh(_ session: AuthSession, extra: [(String, String)]) async throws(AuthError) -> AuthSession {
        guard let refreshToken = session.refreshToken else { throw .unsupported("the session has no refresh token") }
        // With DPoP configured, a session without a key would be refreshed without a proof and
        // its Bearer tokens accepted: refused, the user signs in again with DPoP.
        guard session.dpopKey != nil || !provider.configuration.dpop else { throw Self.notDPoPBound }
        // A DPoP session's refresh token is bound to its key (RFC 9449 section 5): the proof is by that key.
        let key = try session.dpopKey.map { (pem) throws(AuthError) in try DPoPProver.key(stored: pem) }
        let response = try await provider.token(grant: "refresh_token", [("refresh_token", refreshToken)] + extra, dpopKey: key)
        return try await provider.session(from: response, nonce: nil, requireIDToken: false, previous: session)
    }

    /// Revokes the refresh token and the access token; the access token is revoked even when
    /// the refresh token's revocation failed (the first failure is thrown afterwards).
    func revoke(_ session: AuthSession) async throws(AuthError) {
        var failure: AuthError?
        let dpop = try provider.prover(for: session)
        if let refreshToken = session.refreshToken {
            do { try await provider.revoke(refreshToken, hint: "refresh_token", bearer: session.accessToken, dpop: dpop) } catch { failure = error }
        }
        do { try await provider.revoke(session.accessToken, hint: "access_token", bearer: session.accessToken, dpop: dpop) } catch {
            failure = failure ?? error
        }
        // The resources' access tokens too (bounded by ResourceTokenSet.maximumCount).
        for token in session.resourceTokens.values {
            do { try await provider.revoke(token.accessToken, hint: "access_token", bearer: token.accessToken, dpop: dpop) } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
    }
}
