import Foundation

extension OIDCClient {
    /// The headers that authorize one request to a resource server with the session's access
    /// token (refreshed first when it expires within the margin): `Authorization: Bearer ...`,
    /// or for a DPoP-bound session `Authorization: DPoP ...` and a `DPoP` proof for this method
    /// and URL (`htu` without query and fragment, `ath`, the origin's last nonce).
    ///
    /// A proof is single-use and short-lived: ask again for every request. When the server
    /// answers 401 with `WWW-Authenticate: DPoP error="use_dpop_nonce"`, call
    /// `noteResponse(_:for:)` with that answer and ask again (or use `send(authorized:)`, which
    /// does both).
    /// - Throws: `AuthError.notSignedIn`, or what refreshing the session throws;
    ///   `.invalidConfiguration` for a URL that is not https (plain http only on this machine,
    ///   unless `allowsInsecureHTTP`); `.unsupported` for a session without a DPoP key when the
    ///   configuration asks for DPoP.
    /// - Parameter resource: the resource (RFC 8707) whose access token to send (see
    ///   `accessToken(for:minTTL:)`); `nil` (default): the session's main access token.
    public func authorizationHeaders(for url: URL, method: String, resource: URL? = nil) async throws(AuthError) -> [String: String] {
        let (accessToken, dpop) = try await resourceSession(for: url, resource: resource)
        return try await AuthorizedRequest.headers(accessToken: accessToken, dpop: dpop, method: method, url: url)
    }

    /// The session and its prover for a request to `url`. The token goes only over https, or
    /// plain http on this machine (or anywhere with `allowsInsecureHTTP`), as for the
    /// provider's own endpoints. With DPoP configured, a session without a key (signed in
    /// before DPoP was turned on, or by a client without it) is refused: sending its token as
    /// a Bearer token would be the silent downgrade the configuration exists to prevent.
    /// A resource's token (RFC 8707) is bound to the session's key like the main one.
    private func resourceSession(for url: URL, resource: URL?) async throws(AuthError) -> (accessToken: String, dpop: DPoPProver?) {
        try AuthorizedRequest.checkDestination(url, allowsInsecureHTTP: configuration.allowsInsecureHTTP)
        let (session, accessToken): (AuthSession, String)
        if let resource {
            let credentials = try await sessions.resourceCredentials(for: resource, minTTL: .zero)
            (session, accessToken) = (credentials.session, credentials.token.accessToken)
        } else {
            let current = try await getSession()
            (session, accessToken) = (current, current.accessToken)
        }
        let dpop = try provider.prover(for: session)
        guard dpop != nil || !configuration.dpop else { throw OIDCRefresher.notDPoPBound }
        return (accessToken, dpop)
    }

    /// Remembers the `DPoP-Nonce` a resource server sent with `response` to a request to `url`,
    /// for the next `authorizationHeaders(for:method:)` of that origin (and of the other
    /// processes sharing the session).
    public func noteResponse(_ response: HTTPResponse, for url: URL) async {
        await provider.dpopNonces.learn(from: response, for: url)
    }

    /// Sends `request` with `authorizationHeaders(for:method:)` added, through the client's
    /// transport, and retries it exactly once with a new proof when a DPoP server answers with
    /// a nonce challenge carrying a new nonce. Any other answer, and the second one, is
    /// returned as it is (a 401 stays a 401: the caller decides whether to sign in again).
    /// `resource`: as for `authorizationHeaders(for:method:resource:)`.
    public func send(authorized request: HTTPRequest, resource: URL? = nil) async throws(AuthError) -> HTTPResponse {
        let (accessToken, dpop) = try await resourceSession(for: request.url, resource: resource)
        return try await AuthorizedRequest.send(request, accessToken: accessToken, dpop: dpop, transport: provider.http.transport)
    }
}
