import Foundation

/// A client the provider registered (RFC 7591 §3.2.1), with what RFC 7592 management needs.
/// The secrets (`clientSecret`, `registrationAccessToken`) are `RegistrationSecret`s: never in
/// `description`, logs or errors. Keep it in the vault with `save(to:key:options:)`.
public struct RegisteredClient: Sendable, Equatable, CustomStringConvertible {
    /// The client identifier to use in authorization and token requests.
    public var clientID: String
    /// The client secret, for a confidential client (`nil` for a public one).
    public var clientSecret: RegistrationSecret?
    /// When the secret expires; `nil` when it never does (`client_secret_expires_at: 0`) or
    /// there is no secret.
    public var clientSecretExpiresAt: Date?
    /// When the provider issued the client id, if it said.
    public var clientIDIssuedAt: Date?
    /// The RFC 7592 registration access token (`nil` when the provider offers no management).
    public var registrationAccessToken: RegistrationSecret?
    /// Where the registration is read, updated and deleted (RFC 7592), on the registration
    /// endpoint's origin.
    public var registrationClientURI: URL?
    /// The registration endpoint the client was registered at.
    public var registrationEndpoint: URL
    /// The metadata the provider recorded, as it answered it, without the secrets.
    public var metadata: JSONValue

    /// Creates a registered client by hand (for example one registered out of band).
    public init(
        clientID: String, clientSecret: RegistrationSecret? = nil, clientSecretExpiresAt: Date? = nil,
        clientIDIssuedAt: Date? = nil, registrationAccessToken: RegistrationSecret? = nil,
        registrationClientURI: URL? = nil, registrationEndpoint: URL, metadata: JSONValue = .object([:])
    ) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.clientSecretExpiresAt = clientSecretExpiresAt
        self.clientIDIssuedAt = clientIDIssuedAt
        self.registrationAccessToken = registrationAccessToken
        self.registrationClientURI = registrationClientURI
        self.registrationEndpoint = registrationEndpoint
        self.metadata = metadata
    }

    /// How this client authenticates at the token endpoint: `.none` without a secret, the
    /// secret by HTTP Basic when the provider recorded `client_secret_basic` or nothing, by
    /// the form otherwise.
    public var clientAuthentication: ClientAuthentication {
        guard let clientSecret else { return .none }
        let method = metadata["token_endpoint_auth_method"]?.stringValue
            ?? metadata["token_endpoint_auth_method"]?.arrayValue?.first?.stringValue
        return method == "client_secret_post"
            ? .clientSecretPost(secret: clientSecret.reveal()) : .clientSecretBasic(secret: clientSecret.reveal())
    }

    /// Whether the secret has expired at `now` (a client without an expiring secret never has).
    public func secretHasExpired(at now: Date = Date()) -> Bool {
        clientSecretExpiresAt.map { $0 <= now } ?? false
    }

    /// The client id and registration URI; the secrets are never shown.
    public var description: String {
        "RegisteredClient(\(clientID.prefix(64)), secret: \(clientSecret == nil ? "none" : "redacted"), "
            + "management: \(registrationClientURI.map { Redactor.describe($0) } ?? "none"))"
    }
}
