import CredentialVault
import Foundation

/// What a token exchange issued (RFC 8693 section 2.2.1). The tokens are secrets:
/// `description` never shows them.
public struct TokenExchangeResult: Sendable, CustomStringConvertible {
    /// The issued token (`access_token` in the response, whatever its type).
    public let issuedToken: String
    /// What `issuedToken` is (`issued_token_type`, required by the RFC).
    public let issuedTokenType: TokenTypeIdentifier
    /// How to present it: `Bearer` (or `DPoP`) for an access token, `N_A` for a token that is
    /// not one (RFC 8693 section 2.2.1).
    public let tokenType: String
    /// When it expires, if the provider said.
    public let expiresAt: Date?
    /// The scope granted, when it differs from the one asked for.
    public let scope: String?
    /// A refresh token, rarely issued for an exchange.
    public let refreshToken: String?

    /// The result without its tokens.
    public var description: String {
        var parts = ["issued: \(issuedTokenType)", "token type: \(tokenType)"]
        if let expiresAt { parts.append("expires: \(expiresAt)") }
        if let scope { parts.append("scope: \(scope)") }
        if refreshToken != nil { parts.append("with a refresh token") }
        return "TokenExchangeResult(\(parts.joined(separator: ", ")))"
    }

    /// Decodes a 200 answer of the token endpoint; `now` dates `expires_in`. The members it
    /// shares with every token response are read as `TokenResponse` reads them.
    static func decode(_ body: Data, now: Date) throws(AuthError) -> TokenExchangeResult {
        let answer: TokenResponse
        let issued: String?
        do {
            answer = try OutsideJSON.decode(TokenResponse.self, from: body)
            issued = try OutsideJSON.decode(IssuedType.self, from: body).issuedTokenType
        } catch let error as AuthError {
            throw error
        } catch {
            throw .invalidResponse("the token exchange response is not the expected JSON")
        }
        guard !answer.accessToken.isEmpty else { throw .invalidResponse("empty access_token") }
        guard let issued else {
            throw .invalidResponse("the token exchange response has no issued_token_type (RFC 8693 section 2.2.1)")
        }
        let issuedType = try TokenTypeIdentifier.answered(issued)
        let tokenType = answer.tokenType ?? "Bearer"
        // N_A says "not an access token": only believed for a token that is not one; an access
        // token must be presentable (Bearer: this client sends no DPoP proof for an exchange).
        if tokenType == "N_A" {
            guard issuedType != .accessToken else {
                throw .invalidResponse("token_type N_A for an access token")
            }
        } else {
            try OAuthEndpointClient.checkTokenType(tokenType, proofSent: false)
        }
        return TokenExchangeResult(
            issuedToken: answer.accessToken, issuedTokenType: issuedType, tokenType: tokenType,
            expiresAt: answer.expiresIn.map { now.addingTimeInterval($0) }, scope: answer.scope, refreshToken: answer.refreshToken)
    }

    /// The one member a token exchange answer adds to a token response.
    private struct IssuedType: Decodable {
        var issuedTokenType: String?
        enum CodingKeys: String, CodingKey { case issuedTokenType = "issued_token_type" }
    }
}
