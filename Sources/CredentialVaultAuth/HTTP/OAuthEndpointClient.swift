import Logging
import CredentialVault
import Foundation

/// Talks to OAuth endpoints: builds form posts, applies client authentication, enforces the
/// deadline and turns HTTP answers into `TokenResponse` or a precise `AuthError`.
struct OAuthEndpointClient: Sendable {
    let transport: any HTTPTransport
    let timeout: Duration
    let logger: Logger
    /// glewlwyd answers a rejected refresh token with a bare 400 (no JSON body). RFC 6749 §5.2
    /// makes 400 the status of every token-endpoint error and our request is well-formed, so a
    /// bare 400 to a refresh request means the refresh token was refused.
    let bareBadRequestIsInvalidGrant: Bool

    /// Sends a form POST and returns the raw response (its body at most `limit` bytes).
    func postForm(
        _ url: URL, _ form: [(String, String)], headers extra: [String: String] = [:], limit: Int = ResponseLimit.token
    ) async throws(AuthError) -> HTTPResponse {
        var headers = extra
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        headers["Accept"] = "application/json"
        let request = HTTPRequest(
            method: "POST", url: url, headers: headers, body: FormEncoding.body(form), timeout: timeout,
            maximumResponseSize: limit)
        logger.trace("\(request)", metadata: ["category": "http"])
        let response = try await transport.send(request)
        logger.trace("\(request) -> \(response.status)", metadata: ["category": "http"])
        return response
    }

    /// GETs a JSON document (discovery, JWKS) and returns its bytes; non-200 is an error.
    func getJSON(_ url: URL, limit: Int) async throws(AuthError) -> Data {
        try await getJSONResponse(url, limit: limit).body
    }

    /// GETs a JSON document and returns the whole response (for its caching headers); non-200 is an error.
    func getJSONResponse(_ url: URL, limit: Int) async throws(AuthError) -> HTTPResponse {
        var request = HTTPRequest(method: "GET", url: url, headers: ["Accept": "application/json"], timeout: timeout)
        request.maximumResponseSize = limit
        let response = try await transport.send(request)
        logger.trace("\(request) -> \(response.status)", metadata: ["category": "http"])
        guard response.status == 200 else { throw Self.failure(response, grant: nil, confidential: false, bare400IsInvalidGrant: false) }
        return response
    }

    /// POSTs a token request to `metadata`'s token endpoint and decodes the answer. With
    /// `dpop`, every attempt carries a fresh proof (and a fresh client assertion), a
    /// `use_dpop_nonce` answer is retried once with the nonce it gave, and the answer must be a
    /// DPoP token; without, a DPoP token is refused (it could not be used).
    func token(
        _ metadata: ProviderMetadata, grant: String, parameters: [(String, String)], clientID: String,
        authentication: ClientAuthentication, now: @escaping @Sendable () -> Date, dpop: DPoPProver? = nil
    ) async throws(AuthError) -> TokenResponse {
        let response = try await tokenEndpoint(
            metadata, grant: grant, parameters: parameters, clientID: clientID, authentication: authentication, now: now, dpop: dpop)
        do {
            let decoded = try OutsideJSON.decode(TokenResponse.self, from: response.body)
            guard !decoded.accessToken.isEmpty else { throw AuthError.invalidResponse("empty access_token") }
            try Self.checkTokenType(decoded.tokenType, proofSent: dpop != nil)
            return decoded
        } catch let error as AuthError {
            throw error
        } catch {
            throw .invalidResponse("the token response is not the expected JSON")
        }
    }

    /// POSTs a request to `metadata`'s token endpoint (client authentication, DPoP proofs and
    /// the one nonce retry as `token` describes) and returns its 200 answer undecoded: the
    /// token exchange grant decodes another shape. Any other status is a precise error.
    func tokenEndpoint(
        _ metadata: ProviderMetadata, grant: String, parameters: [(String, String)], clientID: String,
        authentication: ClientAuthentication, now: @escaping @Sendable () -> Date, dpop: DPoPProver? = nil
    ) async throws(AuthError) -> HTTPResponse {
        let endpoint = metadata.tokenEndpoint
        let attempt = { (proof: String?) async throws(AuthError) -> HTTPResponse in
            var form = [("grant_type", grant)] + parameters
            var headers: [String: String] = [:]
            try authentication.apply(
                clientID: clientID, endpoint: endpoint, metadata: metadata, now: now(), form: &form, headers: &headers)
            if let proof { headers["DPoP"] = proof }
            return try await self.postForm(endpoint, form, headers: headers)
        }
        let response: HTTPResponse
        if let dpop {
            response = try await dpop.exchange(method: "POST", url: endpoint) { (proof) async throws(AuthError) in try await attempt(proof) }
        } else {
            response = try await attempt(nil)
        }
        guard response.status == 200 else {
            let error = Self.failure(
                response, grant: grant, confidential: authentication.isConfidential,
                bare400IsInvalidGrant: bareBadRequestIsInvalidGrant)
            logger.debug("\(grant) request refused: \(error)", metadata: ["category": "token"])
            throw error
        }
        return response
    }

    /// `DPoP` only when a proof was sent (RFC 9449 section 5); a Bearer token (or none named,
    /// RFC 6749 makes `token_type` required) only when none was. A provider may answer a proof
    /// with a Bearer token (section 5 allows it), but this client only sends proofs when the
    /// configuration asks for bound tokens, so it refuses that rather than keep a token weaker
    /// than asked for.
    static func checkTokenType(_ type: String?, proofSent: Bool) throws(AuthError) {
        let type = type?.lowercased()
        switch (type, proofSent) {
        case ("dpop", true), ("bearer", false), (nil, false): return
        case ("dpop", false):
            throw .invalidResponse("the provider issued a DPoP-bound token to a request without a DPoP proof")
        case ("bearer", true), (nil, true):
            throw .invalidResponse("the provider issued a Bearer token although DPoP was asked for (turn DPoP off for this provider)")
        default:
            throw .unsupported("token type \(type?.prefix(20) ?? "") (only Bearer and DPoP tokens are supported)")
        }
    }

    /// Maps a non-success answer to an error.
    static func failure(_ response: HTTPResponse, grant: String?, confidential: Bool, bare400IsInvalidGrant: Bool) -> AuthError {
        let status = response.status
        if status == 429 {
            return .rateLimited(retryAfterSeconds: ServerNumber.retryAfter(response.headers["retry-after"]))
        }
        if status >= 500 { return .serverUnavailable(status: status) }
        if let body = OAuthErrorBody.parse(response.body) {
            let text = Redactor.providerText(body.errorDescription)
            switch body.error {
            case "invalid_grant": return .invalidGrant(text)
            case "invalid_client": return .invalidCredentials
            case "access_denied": return .accessDenied
            case "expired_token": return .authorizationExpired
            // The caller that knows which resource it asked for names it (a refresh for one resource).
            case "invalid_target": return .invalidTarget(resource: nil)
            default:
                let code = String(body.error.prefix(64).filter { $0.isASCII && !$0.isWhitespace })
                return .providerError(code: code, description: text)
            }
        }
        if confidential && (status == 401 || status == 403) { return .invalidCredentials }
        if status == 400 && grant == "refresh_token" && bare400IsInvalidGrant {
            return .invalidGrant("the provider refused the refresh token")
        }
        if (300..<400).contains(status) { return .invalidResponse("unexpected redirect (HTTP \(status))") }
        return .providerError(code: "http_\(status)", description: nil)
    }
}
