import Foundation

/// The `aud` a client assertion (`private_key_jwt`, `client_secret_jwt`) names.
///
/// Providers disagree: RFC 7523 and OpenID Connect Core name the token endpoint URL;
/// draft-ietf-oauth-rfc7523bis moves to the issuer identifier alone (a token endpoint URL can be
/// ambiguous between servers); glewlwyd and Okta want the URL of the endpoint the assertion is
/// sent to (the revocation endpoint for a revocation). Pick what the provider documents.
public enum ClientAssertionAudience: Sendable, Hashable, CustomStringConvertible {
    /// The URL of the endpoint receiving the request (the token endpoint for token requests,
    /// the revocation endpoint for revocations, ...): what glewlwyd requires. The default.
    case requestEndpoint
    /// The token endpoint URL, whatever endpoint the request goes to (RFC 7523, OIDC Core).
    case tokenEndpoint
    /// The provider's issuer identifier (draft-ietf-oauth-rfc7523bis).
    case issuer
    /// Exactly this string.
    case explicit(String)

    /// The `aud` value for a request to `endpoint` at a provider described by `metadata`.
    func value(endpoint: URL, metadata: ProviderMetadata) -> String {
        switch self {
        case .requestEndpoint: endpoint.absoluteString
        case .tokenEndpoint: metadata.tokenEndpoint.absoluteString
        case .issuer: metadata.issuer
        case .explicit(let audience): audience
        }
    }

    /// The choice, in words (`explicit` shows its string: an audience is no secret).
    public var description: String {
        switch self {
        case .requestEndpoint: "request endpoint"
        case .tokenEndpoint: "token endpoint"
        case .issuer: "issuer"
        case .explicit(let audience): "\"\(audience)\""
        }
    }
}
