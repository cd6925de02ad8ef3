import Foundation

/// The metadata of a client to register (RFC 7591 §2): what the client asks the provider to
/// record. Only the members set are sent; `additional` carries extensions (for example
/// glewlwyd's `client_confidential`) and any RFC 7591 member without a property here.
public struct ClientMetadata: Sendable, Equatable {
    /// Redirect URIs, matched exactly by most providers (a loopback redirect with its port).
    public var redirectURIs: [String]
    /// Grant types (`authorization_code`, `refresh_token`, ...).
    public var grantTypes: [String]
    /// Response types (`code`).
    public var responseTypes: [String]
    /// How the client authenticates at the token endpoint (`none` for a public client,
    /// `client_secret_basic`, `private_key_jwt`, ...); `nil` leaves it to the provider.
    public var tokenEndpointAuthMethod: String?
    /// A human-readable name shown on the consent screen.
    public var clientName: String?
    /// Space-separated scopes the client may ask for.
    public var scope: String?
    /// `native` or `web` (OpenID Connect Dynamic Registration).
    public var applicationType: String?
    /// Where the client publishes its public keys (for `private_key_jwt`).
    public var jwksURI: URL?
    /// The client's public keys inline (a JWK Set), the alternative to `jwksURI`.
    public var jwks: JSONValue?
    /// Further members sent as given (extensions; they never override the properties above).
    public var additional: [String: JSONValue]

    /// Creates metadata; only non-empty members are sent.
    public init(
        redirectURIs: [String], grantTypes: [String] = ["authorization_code", "refresh_token"],
        responseTypes: [String] = ["code"], tokenEndpointAuthMethod: String? = nil, clientName: String? = nil,
        scope: String? = nil, applicationType: String? = nil, jwksURI: URL? = nil, jwks: JSONValue? = nil,
        additional: [String: JSONValue] = [:]
    ) {
        self.redirectURIs = redirectURIs
        self.grantTypes = grantTypes
        self.responseTypes = responseTypes
        self.tokenEndpointAuthMethod = tokenEndpointAuthMethod
        self.clientName = clientName
        self.scope = scope
        self.applicationType = applicationType
        self.jwksURI = jwksURI
        self.jwks = jwks
        self.additional = additional
    }

    /// A public native client (a CLI or desktop app: no secret, PKCE, loopback redirects).
    ///
    /// Sends `token_endpoint_auth_method: none` as RFC 7591 says, and glewlwyd's
    /// `client_confidential: false`: glewlwyd 2.7.5 reads `none` only from an array, so with the
    /// RFC's string alone it registers a confidential client without a secret whose code
    /// exchange then fails `unauthorized_client`. Other providers ignore the unknown member.
    public static func publicNative(redirectURIs: [String], clientName: String? = nil, scope: String? = nil) -> ClientMetadata {
        ClientMetadata(
            redirectURIs: redirectURIs, tokenEndpointAuthMethod: "none", clientName: clientName, scope: scope,
            applicationType: "native", additional: ["client_confidential": .bool(false)])
    }

    /// JWK members that hold private or symmetric key material (RFC 7518 section 6).
    static let privateKeyMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    /// Refuses metadata whose `jwks` (the property or an `additional` member) carries private
    /// or symmetric key material: RFC 7591 section 2 forbids it, and the provider (and whoever
    /// reads its client records) would get the client's private key, e.g. when a private JWK
    /// was passed where its public half belonged.
    func checkPublicKeysOnly() throws(AuthError) {
        guard case .object(let object) = json(), let jwks = object["jwks"] else { return }
        if Self.holdsPrivateKeyMaterial(jwks) {
            throw .invalidConfiguration("the client metadata's jwks holds private key material: register the public keys only")
        }
    }

    private static func holdsPrivateKeyMaterial(_ value: JSONValue) -> Bool {
        switch value {
        case .object(let members): members.contains { privateKeyMembers.contains($0.key) || holdsPrivateKeyMaterial($0.value) }
        case .array(let values): values.contains(where: holdsPrivateKeyMaterial)
        default: false
        }
    }

    /// The JSON object sent to the provider (plus `client_id` for an RFC 7592 update).
    func json(clientID: String? = nil) -> JSONValue {
        var object = additional
        // Omitted when empty: RFC 7591 §2 needs redirect URIs only for redirect-based grants.
        if !redirectURIs.isEmpty { object["redirect_uris"] = .array(redirectURIs.map(JSONValue.string)) }
        if !grantTypes.isEmpty { object["grant_types"] = .array(grantTypes.map(JSONValue.string)) }
        if !responseTypes.isEmpty { object["response_types"] = .array(responseTypes.map(JSONValue.string)) }
        if let tokenEndpointAuthMethod { object["token_endpoint_auth_method"] = .string(tokenEndpointAuthMethod) }
        if let clientName { object["client_name"] = .string(clientName) }
        if let scope { object["scope"] = .string(scope) }
        if let applicationType { object["application_type"] = .string(applicationType) }
        if let jwksURI { object["jwks_uri"] = .string(jwksURI.absoluteString) }
        if let jwks { object["jwks"] = jwks }
        if let clientID { object["client_id"] = .string(clientID) }
        return .object(object)
    }
}
