import CredentialVault
import Foundation

extension OIDCProvider {
    /// Pushes an authorization request's `parameters` to the PAR `endpoint` (RFC 9126 section
    /// 2.1), authenticated as this client authenticates at the token endpoint (a client
    /// assertion's audience is the PAR endpoint by default), and returns the request URI.
    ///
    /// No DPoP header is sent: the key's thumbprint travels as `dpop_jkt` among the parameters
    /// (RFC 9449 section 10.1 allows either), which binds the code just the same and avoids a
    /// nonce round trip (glewlwyd 2.7.5 answers a proof without its nonce at /par with a 403
    /// and no `DPoP-Nonce`, so a proof there cannot work until a nonce was learnt elsewhere).
    /// - Throws: `pushedAuthorizationRefused` for a refusal without an OAuth error body, the
    ///   token endpoint's mapping for one with it, `invalidResponse` for a malformed answer.
    func pushAuthorizationRequest(
        _ parameters: [(String, String)], to endpoint: URL, metadata: ProviderMetadata
    ) async throws(AuthError) -> PushedRequest {
        let authentication = configuration.clientAuthentication
        // The client authentication adds `client_id` itself where its method sends one
        // (client_secret_basic names the client in the Authorization header alone).
        var form = parameters.filter { $0.0 != "client_id" }
        var headers: [String: String] = [:]
        let sentAt = clock.now()
        let sentAtMonotonic = ContinuousClock.now
        try authentication.apply(
            clientID: configuration.clientID, endpoint: endpoint, metadata: metadata, now: sentAt, form: &form, headers: &headers)
        let response = try await http.postForm(endpoint, form, headers: headers, limit: ResponseLimit.pushedAuthorization)
        // RFC 9126 section 2.2 says 201; 200 is taken too (a success all the same, and the body
        // is checked in full either way).
        guard response.status == 201 || response.status == 200 else {
            let error = Self.pushFailure(response, confidential: authentication.isConfidential)
            logger.debug("the pushed authorization request was refused: \(error)", metadata: ["category": "signin"])
            throw error
        }
        let decoded: PushedAuthorizationResponse
        do { decoded = try OutsideJSON.decode(PushedAuthorizationResponse.self, from: response.body) } catch {
            throw (error as? AuthError) ?? .invalidResponse("the pushed authorization response is not the expected JSON")
        }
        logger.debug("authorization request pushed; its request_uri lives \(Int(decoded.expiresIn)) s", metadata: ["category": "signin"])
        let lifetime = Duration.clamped(seconds: decoded.expiresIn)
        return PushedRequest(
            requestURI: decoded.requestURI, expiresAt: sentAt.addingTimeInterval(decoded.expiresIn),
            openBy: sentAtMonotonic + lifetime - PushedRequest.travelMargin(lifetime: decoded.expiresIn))
    }

    /// A refusal: an OAuth error body is mapped as at the token endpoint (`invalid_client`
    /// is `invalidCredentials`, ...), and so is a bare 401 to a confidential client; 429 and 5xx
    /// are transient as everywhere; any other status without a body is
    /// `pushedAuthorizationRefused` (glewlwyd gives no reason for any PAR error).
    static func pushFailure(_ response: HTTPResponse, confidential: Bool) -> AuthError {
        let status = response.status
        if (200..<300).contains(status) { return .invalidResponse("the PAR endpoint answered HTTP \(status), not 201") }
        // A bare 401 is a failed client authentication, as at the token endpoint (glewlwyd answers
        // an assertion with another audience so).
        if status == 429 || status >= 500 || OAuthErrorBody.parse(response.body) != nil || (300..<400).contains(status)
            || (status == 401 && confidential)
        {
            return OAuthEndpointClient.failure(response, grant: nil, confidential: confidential, bare400IsInvalidGrant: false)
        }
        return .pushedAuthorizationRefused(status: status)
    }
}
