import Logging
import CredentialVault
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

/// https endpoints for an https issuer,
/// discovered or preset, and InsForge's `authUrl`; exact issuer comparison; `iss` required
/// when advertised (RFC 9207); a foreign redirect does not consume the pending sign-in.
@Suite("endpoints and issuers", .ownThread)
struct EndpointAndIssuerTests {
    static let issuer = "https://idp.example"

    /// A discovery document for `issuer` with https endpoints, `edit`ed.
    static func discovery(issuer: String = issuer, edit: (inout [String: String]) -> Void = { _ in }) -> String {
        var members = [
            "issuer": issuer, "authorization_endpoint": "\(issuer)/auth", "token_endpoint": "\(issuer)/token",
            "jwks_uri": "\(issuer)/jwks", "userinfo_endpoint": "\(issuer)/userinfo", "revocation_endpoint": "\(issuer)/revoke",
            "end_session_endpoint": "\(issuer)/logout", "device_authorization_endpoint": "\(issuer)/device",
            "pushed_authorization_request_endpoint": "\(issuer)/par",
        ]
        edit(&members)
        return String(decoding: try! JSONEncoder().encode(members), as: UTF8.self)
    }

    /// Discovers `document` for the https issuer, played by a stub on 127.0.0.1.
    static func discover(_ document: String, issuer: String = issuer) async throws -> Result<ProviderMetadata, AuthError> {
        let stub = try StubProvider { request in
            request.path == "/.well-known/openid-configuration" ? .json(document) : .notFound
        }
        let client = try await OIDCClient(
            configuration: OIDCConfiguration(issuer: URL(string: issuer)!, clientID: "cli"), store: InMemoryStore(),
            transport: RoutingTransport(stub: stub), logger: .credentialVaultSilent)
        do { return .success(try await client.metadata()) } catch { return .failure(error) }
    }

    static let endpointNames = [
        "authorization_endpoint", "token_endpoint", "jwks_uri", "userinfo_endpoint", "revocation_endpoint",
        "end_session_endpoint", "device_authorization_endpoint", "pushed_authorization_request_endpoint",
    ]

    @Test("an https issuer's discovered endpoints must all be https", arguments: endpointNames)
    func discoveredHTTPEndpoint(name: String) async throws {
        #expect(try await Self.discover(Self.discovery()).get().issuer == Self.issuer)
        let result = try await Self.discover(Self.discovery { $0[name] = "http://idp.example/\(name)" })
        guard case .failure(.discoveryFailed(let why)) = result else {
            Issue.record("an http \(name) was accepted: \(result)")
            return
        }
        #expect(why.contains(name))
    }

    @Test("preset metadata is held to the same rule: http endpoints only for a loopback http issuer, on loopback")
    func presetMetadata() async throws {
        func client(issuer: String, token: String, allowsInsecureHTTP: Bool = false) async throws(AuthError) {
            let metadata = ProviderMetadata(
                issuer: issuer, authorizationEndpoint: URL(string: "\(issuer)/auth"), tokenEndpoint: URL(string: token)!,
                jwksURI: URL(string: "\(issuer)/jwks"))
            _ = try await OIDCClient(
                configuration: OIDCConfiguration(
                    issuer: URL(string: issuer)!, clientID: "cli", metadata: metadata, allowsInsecureHTTP: allowsInsecureHTTP),
                store: InMemoryStore(), logger: .credentialVaultSilent)
        }
        for (issuer, token, insecure) in [
            (Self.issuer, "http://idp.example/token", false), (Self.issuer, "http://idp.example/token", true),
            ("http://127.0.0.1:9", "http://idp.example/token", false), (Self.issuer, "ftp://idp.example/token", false),
        ] {
            await expectThrows(\AuthError.isInvalidConfiguration, "\(token) for \(issuer)") {
                try await client(issuer: issuer, token: token, allowsInsecureHTTP: insecure)
            }
        }
        try await client(issuer: Self.issuer, token: "https://other.example/token")
        try await client(issuer: "http://127.0.0.1:9", token: "http://localhost:9/token")
        try await client(issuer: "http://idp.example", token: "http://idp.example/token", allowsInsecureHTTP: true)
    }

    @Test("InsForge: an http authUrl from an https backend is refused")
    func insForgeAuthURL() async throws {
        let stub = try StubProvider { request in
            request.path == "/api/auth/oauth/google" ? .json(#"{"authUrl":"http://accounts.example/o/oauth2/auth?x=1"}"#) : .notFound
        }
        let client = try await InsForgeClient(
            configuration: InsForgeConfiguration(baseURL: URL(string: "https://app.insforge.example")!), store: InMemoryStore(),
            transport: RoutingTransport(stub: stub), logger: .credentialVaultSilent)
        await #expect(throws: InsForgeError.auth(.invalidResponse("the backend's authUrl is not an https URL"))) {
            _ = try await client.beginOAuth(provider: .google, redirectTo: "http://127.0.0.1:5000/callback")
        }
        #expect(stub.requests(to: "/api/auth/oauth/google").count == 1)
    }

    @Test("the discovered issuer must be identical, not equal after trimming a slash", arguments: ["\(issuer)/", "\(issuer)//", "HTTPS://idp.example"])
    func exactIssuer(document: String) async throws {
        let result = try await Self.discover(Self.discovery(issuer: document))
        guard case .failure(.discoveryFailed) = result else {
            Issue.record("issuer \(document) was accepted for \(Self.issuer)")
            return
        }
    }

    /// A provider advertising RFC 9207 whose token endpoint hands out tokens.
    static func rfc9207Client(_ stub: StubProvider) async throws -> OIDCClient {
        try await StubOIDC.client(stub) { $0.authorizationResponseIssParameterSupported = true }
    }

    @Test("iss is required when the provider advertises authorization_response_iss_parameter_supported")
    func issRequired() async throws {
        let stub = try StubProvider { request in request.path == "/token" ? StubOIDC.tokens() : .notFound }
        let client = try await Self.rfc9207Client(stub)
        await #expect(throws: AuthError.invalidResponse("the redirect carries no iss although the provider advertises it (RFC 9207)")) {
            try await StubOIDC.signIn(client)
        }
        await #expect(throws: AuthError.invalidResponse("the redirect comes from another issuer (mix-up)")) {
            try await StubOIDC.signIn(client, extra: "&iss=" + FormEncoding.escape(stub.base + "/"))
        }
        #expect(stub.requests(to: "/token").isEmpty, "no code was exchanged")
        let session = try await StubOIDC.signIn(client, extra: "&iss=" + FormEncoding.escape(stub.base))
        #expect(session.accessToken == "at")
    }

    @Test("a redirect to a foreign endpoint is refused without consuming the pending sign-in")
    func foreignRedirectKeepsPending() async throws {
        let stub = try StubProvider { request in request.path == "/token" ? StubOIDC.tokens() : .notFound }
        let client = try await StubOIDC.client(stub)
        let request = try await client.beginAuthorization(redirectURI: StubOIDC.redirectURI)
        await #expect(throws: AuthError.stateMismatch) {
            try await client.handleRedirect(url: URL(string: "http://127.0.0.1:1/callback?code=evil&state=\(request.state)")!)
        }
        let session = try await client.handleRedirect(url: URL(string: "\(StubOIDC.redirectURI)?code=c&state=\(request.state)")!)
        #expect(session.accessToken == "at")
        #expect(stub.requests(to: "/token").map { $0.form["code"] } == ["c"])
        await #expect(throws: AuthError.stateMismatch) {
            try await client.handleRedirect(url: URL(string: "\(StubOIDC.redirectURI)?code=c&state=\(request.state)")!)
        }
    }
}
