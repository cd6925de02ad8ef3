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
    /// - Throws: `AuthError.invalidConfiguration` for `tokenEndpoint` when `endpoint` is on
    ///   another origin than the token endpoint: a hostile provider's metadata can name another
    ///   provider's token endpoint as its own and its own server as the revocation or device
    ///   endpoint, which would then receive an assertion good at that other provider for its
    ///   minute of validity ("audience injection", the reason draft-ietf-oauth-rfc7523bis moves
    ///   to the issuer).
    func value(endpoint: URL, metadata: ProviderMetadata) throws(AuthError) -> String {
        switch self {
        case .requestEndpoint: return endpoint.absoluteString
        case .tokenEndpoint:
            guard Self.origin(of: endpoint) == Self.origin(of: metadata.tokenEndpoint) else {
                throw .invalidConfiguration(
                    "an assertion for the token endpoint is not sent to \(Redactor.describe(endpoint)), on another origin; use the request-endpoint or issuer audience")
            }
            return metadata.tokenEndpoint.absoluteString
        case .issuer: return metadata.issuer
        case .explicit(let audience): return audience
        }
    }

    /// Scheme, host (both lowercased) and port (the scheme's default when none is given).
    private static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
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
