import Foundation

extension OIDCClient {
    /// The grant type of RFC 8693.
    static let tokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"

    /// Exchanges a token for another at the token endpoint (RFC 8693, OAuth 2.0 Token Exchange),
    /// authenticated as every token request of this client (`clientAuthentication`). Nothing
    /// is stored: the caller keeps the result for as long as it needs it.
    ///
    /// Verified against a stub provider only: none of the providers the tests run (glewlwyd
    /// 2.7.5) implements token exchange. See docs/AUTH.md, "Token exchange".
    /// - Throws: `AuthError.invalidConfiguration` for a request that cannot be sent,
    ///   `unsupported` for a DPoP configuration (the issued token would be bound to no key this
    ///   client keeps: refused rather than issued as Bearer without saying), the provider's refusal as for any token request (`invalid_target` and the like as
    ///   `providerError`), `invalidResponse` for an answer without `issued_token_type`.
    public func exchangeToken(_ request: TokenExchangeRequest) async throws(AuthError) -> TokenExchangeResult {
        guard !configuration.dpop else {
            throw .unsupported("token exchange with DPoP (the issued token would be bound to no key this client keeps)")
        }
        let parameters = try request.parameters()
        let metadata = try await provider.metadata()
        let clock = clock
        let response = try await provider.http.tokenEndpoint(
            metadata, grant: Self.tokenExchangeGrant, parameters: parameters, clientID: configuration.clientID,
            authentication: configuration.clientAuthentication, now: { clock.now() })
        return try TokenExchangeResult.decode(response.body, now: clock.now())
    }
}
