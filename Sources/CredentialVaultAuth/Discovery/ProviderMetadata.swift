import Foundation

/// What an OpenID provider publishes at `/.well-known/openid-configuration` (OpenID Connect
/// Discovery 1.0, RFC 8414), as far as this client uses it. Can also be built by hand for a
/// provider without discovery.
public struct ProviderMetadata: Sendable, Hashable, Codable {
    /// The issuer identifier; ID tokens must carry exactly this `iss`.
    public var issuer: String
    /// Where the browser is sent to sign in.
    public var authorizationEndpoint: URL?
    /// Where codes, refresh tokens and device codes are exchanged.
    public var tokenEndpoint: URL
    /// The provider's signing keys.
    public var jwksURI: URL?
    /// The UserInfo endpoint.
    public var userinfoEndpoint: URL?
    /// RFC 7009 token revocation.
    public var revocationEndpoint: URL?
    /// RP-initiated logout.
    public var endSessionEndpoint: URL?
    /// RFC 8628 device authorization.
    public var deviceAuthorizationEndpoint: URL?
    /// PKCE methods; when published, it must contain `S256`.
    public var codeChallengeMethodsSupported: [String]?
    /// Signing algorithms of ID tokens.
    public var idTokenSigningAlgValuesSupported: [String]?
    /// Grant types.
    public var grantTypesSupported: [String]?
    /// Whether the redirect carries an `iss` parameter (RFC 9207).
    public var authorizationResponseIssParameterSupported: Bool?
    /// RFC 7591 dynamic client registration endpoint (`registration_endpoint`), when the provider offers it.
    public var registrationEndpoint: URL?
    /// RFC 9126 pushed authorization request endpoint (`pushed_authorization_request_endpoint`).
    public var pushedAuthorizationRequestEndpoint: URL?
    /// Whether the provider accepts authorization requests only through PAR
    /// (`require_pushed_authorization_requests`, RFC 9126 section 5; absent means `false`).
    public var requirePushedAuthorizationRequests: Bool?
    /// Whether the provider accepts an https URL of a Client ID Metadata Document as
    /// `client_id` (`client_id_metadata_document_supported`, the MCP authorization profile;
    /// absent means `false`).
    public var clientIDMetadataDocumentSupported: Bool?

    /// Creates metadata by hand.
    public init(
        issuer: String, authorizationEndpoint: URL?, tokenEndpoint: URL, jwksURI: URL?,
        userinfoEndpoint: URL? = nil, revocationEndpoint: URL? = nil, endSessionEndpoint: URL? = nil,
        deviceAuthorizationEndpoint: URL? = nil, codeChallengeMethodsSupported: [String]? = nil,
        idTokenSigningAlgValuesSupported: [String]? = nil, grantTypesSupported: [String]? = nil,
        authorizationResponseIssParameterSupported: Bool? = nil, registrationEndpoint: URL? = nil,
        pushedAuthorizationRequestEndpoint: URL? = nil, requirePushedAuthorizationRequests: Bool? = nil,
        clientIDMetadataDocumentSupported: Bool? = nil
    ) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.jwksURI = jwksURI
        self.userinfoEndpoint = userinfoEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.endSessionEndpoint = endSessionEndpoint
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.codeChallengeMethodsSupported = codeChallengeMethodsSupported
        self.idTokenSigningAlgValuesSupported = idTokenSigningAlgValuesSupported
        self.grantTypesSupported = grantTypesSupported
        self.authorizationResponseIssParameterSupported = authorizationResponseIssParameterSupported
        self.registrationEndpoint = registrationEndpoint
        self.pushedAuthorizationRequestEndpoint = pushedAuthorizationRequestEndpoint
        self.requirePushedAuthorizationRequests = requirePushedAuthorizationRequests
        self.clientIDMetadataDocumentSupported = clientIDMetadataDocumentSupported
    }

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case jwksURI = "jwks_uri"
        case userinfoEndpoint = "userinfo_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case endSessionEndpoint = "end_session_endpoint"
        case deviceAuthorizationEndpoint = "device_authorization_endpoint"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case grantTypesSupported = "grant_types_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
        case registrationEndpoint = "registration_endpoint"
        case pushedAuthorizationRequestEndpoint = "pushed_authorization_request_endpoint"
        case requirePushedAuthorizationRequests = "require_pushed_authorization_requests"
        case clientIDMetadataDocumentSupported = "client_id_metadata_document_supported"
    }

    /// `true` unless the provider publishes a PKCE method list without `S256`.
    public var supportsS256: Bool { codeChallengeMethodsSupported.map { $0.contains("S256") } ?? true }
}
