import Logging
import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

@Suite("HTTP transport and endpoint errors", .ownThread)
struct TransportTests {
    static func serviceClient(tokenEndpoint: URL, timeout: Duration) throws -> ClientCredentialsClient {
        var configuration = OIDCConfiguration(
            issuer: URL(string: "http://127.0.0.1:1/issuer")!, clientID: "svc",
            clientAuthentication: .clientSecretBasic(secret: "s"))
        configuration.requestTimeout = timeout
        configuration.metadata = ProviderMetadata(
            issuer: "http://127.0.0.1:1/issuer", authorizationEndpoint: nil, tokenEndpoint: tokenEndpoint, jwksURI: nil)
        return try ClientCredentialsClient(
            configuration: configuration, store: InMemoryStore(), retryPolicy: .none, logger: .credentialVaultSilent)
    }

    @Test("a provider that accepts the connection but never answers: timedOut at the request's deadline")
    func deadline() async throws {
        let silent = try LoopbackListener(port: .ephemeral)  // the backlog accepts; nobody answers
        defer { silent.close() }
        let client = try Self.serviceClient(tokenEndpoint: URL(string: "http://127.0.0.1:\(silent.port)/token")!, timeout: .milliseconds(300))
        // Far below URLSession's 60 s default: had the 300 ms deadline been lost, the ceiling would pass first.
        try await withCeiling(.seconds(30), "a token request with a 300 ms deadline") {
            await #expect(throws: AuthError.timedOut) { _ = try await client.accessToken() }
        }
    }

    @Test("a closed port is a networkError (transient)")
    func refused() async throws {
        let closed = try ClosedPort()
        let client = try Self.serviceClient(tokenEndpoint: URL(string: "http://127.0.0.1:\(closed.port)/token")!, timeout: .seconds(5))
        let error = await #expect(throws: AuthError.self) { _ = try await client.accessToken() }
        guard case .networkError? = error else {
            Issue.record("expected networkError, got \(String(describing: error))")
            return
        }
        #expect(error?.isTransient == true)
    }

    @Test("token endpoint answers map to precise errors", arguments: [
        (400, #"{"error":"invalid_grant","error_description":"expired"}"#, "refresh_token", AuthError.invalidGrant("expired")),
        (400, "", "refresh_token", AuthError.invalidGrant("the provider refused the refresh token")),
        (400, "", "authorization_code", AuthError.providerError(code: "http_400", description: nil)),
        (401, #"{"error":"invalid_client"}"#, "client_credentials", AuthError.invalidCredentials),
        (403, #"{"error":"invalid_code"}"#, "authorization_code", AuthError.providerError(code: "invalid_code", description: nil)),
        (400, #"{"error":"access_denied"}"#, "urn:ietf:params:oauth:grant-type:device_code", AuthError.accessDenied),
        (400, #"{"error":"expired_token"}"#, "urn:ietf:params:oauth:grant-type:device_code", AuthError.authorizationExpired),
        (503, "", "refresh_token", AuthError.serverUnavailable(status: 503)),
        (429, "", "refresh_token", AuthError.rateLimited(retryAfterSeconds: nil)),
    ])
    func mapping(status: Int, body: String, grant: String, expected: AuthError) {
        let error = OAuthEndpointClient.failure(
            HTTPResponse(status: status, body: Data(body.utf8)), grant: grant, confidential: false, bare400IsInvalidGrant: true)
        #expect(error == expected)
    }

    @Test("a provider's error description is redacted and cut short")
    func providerTextRedacted() {
        let token = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlc2lnbmF0dXJl"
        let body = Data(#"{"error":"invalid_grant","error_description":"token \#(token) is bad \#(String(repeating: "x ", count: 300))"}"#.utf8)
        let error = OAuthEndpointClient.failure(HTTPResponse(status: 400, body: body), grant: "refresh_token", confidential: false, bare400IsInvalidGrant: true)
        #expect(!error.description.contains(token))
        #expect(error.description.count < 300)
    }

    @Test("discovery refuses a document that names another issuer")
    func discoveryIssuerMismatch() async throws {
        let transport = StaticTransport(body: #"{"issuer":"https://evil.example","token_endpoint":"https://evil.example/token"}"#)
        let client = try await OIDCClient(
            configuration: OIDCConfiguration(issuer: URL(string: "https://good.example")!, clientID: "c"),
            store: InMemoryStore(), transport: transport, logger: .credentialVaultSilent)
        let error = await #expect(throws: AuthError.self) { _ = try await client.metadata() }
        guard case .discoveryFailed? = error else {
            Issue.record("expected discoveryFailed, got \(String(describing: error))")
            return
        }
    }
}

/// Answers every request with the same 200 JSON body.
struct StaticTransport: HTTPTransport {
    let body: String
    func send(_ request: HTTPRequest) async throws(AuthError) -> HTTPResponse {
        HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
    }
}

@Suite("configuration", .ownThread)
struct ConfigurationTests {
    @Test("plain http is refused for a remote issuer, accepted on loopback or when allowed")
    func insecureHTTP() async throws {
        await #expect(throws: AuthError.invalidConfiguration("the issuer must use https (plain http is accepted only on this machine)")) {
            _ = try await OIDCClient(configuration: OIDCConfiguration(issuer: URL(string: "http://idp.example")!, clientID: "c"), store: InMemoryStore())
        }
        _ = try await OIDCClient(configuration: OIDCConfiguration(issuer: URL(string: "http://127.0.0.1:1")!, clientID: "c"), store: InMemoryStore())
        _ = try await OIDCClient(
            configuration: OIDCConfiguration(issuer: URL(string: "http://idp.example")!, clientID: "c", allowsInsecureHTTP: true),
            store: InMemoryStore())
        await #expect(throws: AuthError.invalidConfiguration("the client id is empty")) {
            _ = try await OIDCClient(configuration: OIDCConfiguration(issuer: URL(string: "https://idp.example")!, clientID: ""), store: InMemoryStore())
        }
        #expect(throws: AuthError.invalidConfiguration("the client credentials grant needs a confidential client (a secret or a private key)")) {
            _ = try ClientCredentialsClient(
                configuration: OIDCConfiguration(issuer: URL(string: "https://idp.example")!, clientID: "c"), store: InMemoryStore())
        }
    }
}
