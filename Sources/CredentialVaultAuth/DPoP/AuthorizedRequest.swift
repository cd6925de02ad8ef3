import Foundation

/// One request to a resource server authorized with an access token: `Authorization: Bearer`,
/// or for a DPoP-bound token `Authorization: DPoP` and a proof for this method and URL (RFC
/// 9449 section 7). Shared by the signed-in session (`OIDCClient`) and the service token
/// (`ClientCredentialsClient`), so both send tokens under the same rules.
enum AuthorizedRequest {
    /// Refuses a destination the token must not go to: only https, or plain http on this
    /// machine (anywhere with `allowsInsecureHTTP`), as for the provider's own endpoints.
    static func checkDestination(_ url: URL, allowsInsecureHTTP: Bool) throws(AuthError) {
        guard EndpointPolicy(issuer: url, allowsInsecureHTTP: allowsInsecureHTTP).allows(url) else {
            throw .invalidConfiguration("the access token is not sent to \(Redactor.describe(url)): not https (plain http only on this machine)")
        }
    }

    /// The headers for one request (a DPoP proof is single-use: ask again for every request).
    static func headers(accessToken: String, dpop: DPoPProver?, method: String, url: URL) async throws(AuthError) -> [String: String] {
        guard let dpop else { return ["Authorization": "Bearer \(accessToken)"] }
        return [
            "Authorization": "DPoP \(accessToken)",
            "DPoP": try await dpop.proof(method: method, url: url, accessToken: accessToken),
        ]
    }

    /// Sends `request` with the headers added; with DPoP, retried exactly once with a new
    /// proof when the server answers with a nonce challenge carrying a new nonce. Any other
    /// answer, and the second one, is returned as it is.
    static func send(
        _ request: HTTPRequest, accessToken: String, dpop: DPoPProver?, transport: any HTTPTransport
    ) async throws(AuthError) -> HTTPResponse {
        guard let dpop else {
            var bearer = request
            bearer.headers["Authorization"] = "Bearer \(accessToken)"
            return try await transport.send(bearer)
        }
        return try await dpop.exchange(method: request.method, url: request.url, accessToken: accessToken) {
            (proof) async throws(AuthError) in
            var attempt = request
            attempt.headers["Authorization"] = "DPoP \(accessToken)"
            attempt.headers["DPoP"] = proof
            return try await transport.send(attempt)
        }
    }
}
