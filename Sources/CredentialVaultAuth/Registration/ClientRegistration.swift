import CredentialVault
import Foundation
import Logging

/// Dynamic client registration (RFC 7591) and its management (RFC 7592): registers a client
/// from its metadata at the provider's `registration_endpoint`, then reads, updates and deletes
/// it with the registration access token.
///
/// Provider differences it absorbs (measured on glewlwyd 2.7.5): registration answered 200
/// instead of 201 and deletion 200 instead of 204 (both accepted); a read that omits the
/// registration access token and URI (the stored ones are kept); an update that must carry the
/// full metadata with `client_id` (always sent so). See docs/AUTH-REGISTRATION.md.
public struct ClientRegistration: Sendable {
    /// The registration endpoint.
    public let endpoint: URL
    private let http: OAuthEndpointClient
    private let policy: EndpointPolicy

    /// A registration client for `endpoint`.
    /// - Parameters:
    ///   - allowsInsecureHTTP: plain http off this machine (never for production: the answer
    ///     carries the client secret and the registration access token).
    ///   - logger: where it logs (redacted; default silent).
    public init(
        endpoint: URL, transport: any HTTPTransport = DefaultHTTPTransport.make(), timeout: Duration = .seconds(30),
        allowsInsecureHTTP: Bool = false, logger: Logger = .credentialVaultSilent
    ) throws(AuthError) {
        let policy = EndpointPolicy(issuer: endpoint, allowsInsecureHTTP: allowsInsecureHTTP)
        guard policy.allows(endpoint) else {
            throw .invalidConfiguration("the registration endpoint \(Redactor.describe(endpoint)) is not https (plain http only on this machine)")
        }
        self.endpoint = endpoint
        self.policy = policy
        self.http = OAuthEndpointClient(transport: transport, timeout: timeout, logger: logger.redacting, bareBadRequestIsInvalidGrant: false)
    }

    /// A registration client for the provider's `registration_endpoint`.
    /// - Throws: `AuthError.unsupported` when the provider publishes none.
    public init(
        provider metadata: ProviderMetadata, transport: any HTTPTransport = DefaultHTTPTransport.make(),
        timeout: Duration = .seconds(30), allowsInsecureHTTP: Bool = false, logger: Logger = .credentialVaultSilent
    ) throws(AuthError) {
        guard let endpoint = metadata.registrationEndpoint else {
            throw .unsupported("the provider publishes no registration_endpoint (dynamic client registration)")
        }
        try self.init(endpoint: endpoint, transport: transport, timeout: timeout, allowsInsecureHTTP: allowsInsecureHTTP, logger: logger)
    }

    /// Registers a client (RFC 7591 §3.1).
    /// - Parameter initialAccessToken: the provider's initial access token when registration is
    ///   protected, sent as `Bearer` (glewlwyd answers 500 to the `DPoP` scheme here).
    /// - Throws: `AuthError.providerError` with the RFC 7591 code (`invalid_redirect_uri`,
    ///   `invalid_client_metadata`, ...), `.invalidCredentials` for a refused initial access
    ///   token, `.invalidResponse` for a malformed answer, `.invalidConfiguration` for a `jwks`
    ///   holding private key material (nothing is sent then).
    public func register(_ metadata: ClientMetadata, initialAccessToken: RegistrationSecret? = nil) async throws(AuthError) -> RegisteredClient {
        try metadata.checkPublicKeysOnly()
        let response = try await send("POST", endpoint, json: metadata.json(), token: initialAccessToken)
        guard response.status == 201 || response.status == 200 else { throw failure(response, authenticated: initialAccessToken != nil) }
        let client = try RegistrationResponse.parse(response.body, endpoint: endpoint)
        http.logger.debug("registered client \(client.clientID.prefix(64))", metadata: ["category": "registration"])
        return client
    }

    /// Reads the client's current registration (RFC 7592 §2.1).
    public func read(_ client: RegisteredClient) async throws(AuthError) -> RegisteredClient {
        let (uri, token) = try management(client)
        let response = try await send("GET", uri, json: nil, token: token)
        guard response.status == 200 else { throw failure(response, authenticated: true) }
        return try RegistrationResponse.parse(response.body, endpoint: endpoint, previous: client)
    }

    /// Replaces the client's metadata (RFC 7592 §2.2: the full metadata, with `client_id`).
    public func update(_ client: RegisteredClient, to metadata: ClientMetadata) async throws(AuthError) -> RegisteredClient {
        try metadata.checkPublicKeysOnly()
        let (uri, token) = try management(client)
        let response = try await send("PUT", uri, json: metadata.json(clientID: client.clientID), token: token)
        guard response.status == 200 else { throw failure(response, authenticated: true) }
        return try RegistrationResponse.parse(response.body, endpoint: endpoint, previous: client)
    }

    /// Deletes the registration (RFC 7592 §2.3); the client id and its tokens stop working.
    public func delete(_ client: RegisteredClient) async throws(AuthError) {
        let (uri, token) = try management(client)
        let response = try await send("DELETE", uri, json: nil, token: token)
        guard response.status == 204 || response.status == 200 else { throw failure(response, authenticated: true) }
    }

    private func management(_ client: RegisteredClient) throws(AuthError) -> (URL, RegistrationSecret) {
        guard let uri = client.registrationClientURI, let token = client.registrationAccessToken else {
            throw .unsupported("the provider gave this client no registration_client_uri and registration access token (RFC 7592)")
        }
        // The token goes only to the registration endpoint's origin, over an allowed scheme.
        guard ResourceURI.sameOrigin(uri, endpoint), policy.allows(uri) else {
            throw .invalidConfiguration("the registration_client_uri is not on the registration endpoint's origin")
        }
        return (uri, token)
    }

    private func send(_ method: String, _ url: URL, json: JSONValue?, token: RegistrationSecret?) async throws(AuthError) -> HTTPResponse {
        var headers = ["Accept": "application/json"]
        var body: Data?
        if let json {
            headers["Content-Type"] = "application/json"
            do { body = try JSONEncoder().encode(json) } catch { throw .invalidConfiguration("the client metadata is not encodable") }
        }
        if let token { headers["Authorization"] = "Bearer " + token.reveal() }
        let request = HTTPRequest(
            method: method, url: url, headers: headers, body: body, timeout: http.timeout,
            maximumResponseSize: ResponseLimit.registration)
        let response = try await http.transport.send(request)
        http.logger.trace("\(request) -> \(response.status)", metadata: ["category": "http"])
        return response
    }

    /// RFC 7591 §3.2.2 errors are OAuth error bodies; a refused token is `invalidCredentials`.
    private func failure(_ response: HTTPResponse, authenticated: Bool) -> AuthError {
        if (200..<300).contains(response.status) {
            return .invalidResponse("unexpected HTTP \(response.status) from the registration endpoint")
        }
        return OAuthEndpointClient.failure(response, grant: nil, confidential: authenticated, bare400IsInvalidGrant: false)
    }
}
