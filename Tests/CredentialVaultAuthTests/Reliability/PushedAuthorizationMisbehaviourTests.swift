import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

/// A PAR endpoint (RFC 9126) that misbehaves: whatever it answers, the sign-in ends with a
/// typed error (never a crash, never a hang), nothing pending is left behind, and the browser
/// is never sent anywhere. Plays a provider that requires PAR.
@Suite("pushed authorization requests: a misbehaving PAR endpoint", .ownThread)
struct PushedAuthorizationMisbehaviourTests {
    /// A client of a stub provider requiring PAR at `/par`, which answers `reply`.
    static func client(
        _ reply: StubProvider.Reply, par: PushedAuthorization = .automatic, store: InMemoryStore = InMemoryStore(),
        authentication: ClientAuthentication = .none, required: Bool = true, endpoint: Bool = true
    ) async throws -> (OIDCClient, StubProvider) {
        let stub = try StubProvider { request in request.path == "/par" ? reply : .notFound }
        var configuration = StubOIDC.configuration(stub) { metadata in
            metadata.pushedAuthorizationRequestEndpoint = endpoint ? stub.url("/par") : nil
            metadata.requirePushedAuthorizationRequests = required
        }
        configuration.pushedAuthorization = par
        configuration.clientAuthentication = authentication
        let client = try await OIDCClient(configuration: configuration, store: store, logger: .credentialVaultSilent)
        return (client, stub)
    }

    static func created(_ json: String) -> StubProvider.Reply { .json(json, status: 201) }

    static let uri = "urn:ietf:params:oauth:request_uri:abc"

    /// The answers and what each must give (the error's case; `nil` means success).
    static var answers: [(String, StubProvider.Reply, AuthError?)] {
        [
            ("garbage", .http(status: 201, headers: [:], body: Data("<html>hello</html>".utf8)), .invalidResponse("")),
            ("empty 201", .http(status: 201, headers: [:], body: Data()), .invalidResponse("")),
            ("a JSON array", created("[]"), .invalidResponse("")),
            ("no request_uri", created(#"{"expires_in":60}"#), .invalidResponse("")),
            ("a numeric request_uri", created(#"{"request_uri":5,"expires_in":60}"#), .invalidResponse("")),
            ("an empty request_uri", created(#"{"request_uri":"","expires_in":60}"#), .invalidResponse("")),
            ("a request_uri with a control character", created(#"{"request_uri":"urn:x\u0001y","expires_in":60}"#), .invalidResponse("")),
            ("a request_uri with a newline", created(#"{"request_uri":"urn:x\r\nLocation: evil","expires_in":60}"#), .invalidResponse("")),
            ("a request_uri with a space", created(#"{"request_uri":"urn:x y","expires_in":60}"#), .invalidResponse("")),
            ("a request_uri with non-ASCII", created(#"{"request_uri":"urn:é","expires_in":60}"#), .invalidResponse("")),
            ("a 3000-character request_uri", created(#"{"request_uri":"urn:\#(String(repeating: "x", count: 3000))","expires_in":60}"#),
             .invalidResponse("")),
            ("no expires_in", created(#"{"request_uri":"\#(uri)"}"#), .invalidResponse("")),
            ("a negative expires_in", created(#"{"request_uri":"\#(uri)","expires_in":-5}"#), .invalidResponse("")),
            ("a zero expires_in", created(#"{"request_uri":"\#(uri)","expires_in":0}"#), .invalidResponse("")),
            ("a textual expires_in", created(#"{"request_uri":"\#(uri)","expires_in":"soon"}"#), .invalidResponse("")),
            ("an expires_in beyond Double", created(#"{"request_uri":"\#(uri)","expires_in":1e400}"#), .invalidResponse("")),
            ("a huge body", created(#"{"request_uri":"\#(uri)","expires_in":60,"pad":"\#(String(repeating: "x", count: 100_000))"}"#),
             .invalidResponse("")),
            ("a bare 403 (glewlwyd's answer to every PAR error)", .http(status: 403, headers: [:], body: Data()),
             .pushedAuthorizationRefused(status: 403)),
            ("a bare 400", .http(status: 400, headers: [:], body: Data()), .pushedAuthorizationRefused(status: 400)),
            ("an HTML 403 page", .http(status: 403, headers: ["Content-Type": "text/html"], body: Data("<h1>no</h1>".utf8)),
             .pushedAuthorizationRefused(status: 403)),
            ("an OAuth error", .json(#"{"error":"invalid_request","error_description":"bad redirect_uri"}"#, status: 400),
             .providerError(code: "invalid_request", description: nil)),
            ("invalid_client", .json(#"{"error":"invalid_client"}"#, status: 401), .invalidCredentials),
            ("a 204", .http(status: 204, headers: [:], body: Data()), .invalidResponse("")),
            ("a redirect", .http(status: 302, headers: ["Location": "http://127.0.0.1:1/"], body: Data()), .invalidResponse("")),
            ("a 503", .http(status: 503, headers: [:], body: Data()), .serverUnavailable(status: 503)),
        ]
    }

    /// Whether `error` is the case `expected` names (for `invalidResponse` and `providerError`
    /// the case and code only: the wording is the product's business).
    static func matches(_ error: AuthError, _ expected: AuthError) -> Bool {
        switch (error, expected) {
        case (.invalidResponse, .invalidResponse): true
        case (.providerError(let code, _), .providerError(let wanted, _)): code == wanted
        default: error == expected
        }
    }

    @Test("each misbehaving answer is a typed error, and nothing is left pending", arguments: 0..<answers.count)
    func answer(index: Int) async throws {
        let (name, reply, expected) = Self.answers[index]
        let store = InMemoryStore()
        let (client, stub) = try await Self.client(reply, store: store)
        defer { stub.close() }
        do {
            let request = try await client.beginAuthorization(redirectURI: StubOIDC.redirectURI)
            Issue.record("\(name): accepted, URL \(request.url)")
        } catch {
            #expect(Self.matches(error, try #require(expected)), "\(name): \(error)")
        }
        #expect(stub.requests(to: "/par").count == 1, "\(name)")
        await #expect(try store.listKeys(service: client.configuration.storageService + ".pending").isEmpty, "\(name)")
    }

    @Test("a 200 answer is taken like the RFC's 201; an enormous expires_in is clamped to an hour")
    func lenientStatusClampedLifetime() async throws {
        let (client, stub) = try await Self.client(.json(#"{"request_uri":"\#(Self.uri)","expires_in":1e12}"#, status: 200))
        defer { stub.close() }
        let request = try await client.beginAuthorization(redirectURI: StubOIDC.redirectURI)
        let expiry = try #require(request.requestURIExpiresAt)
        #expect(expiry <= Date().addingTimeInterval(PushedAuthorizationResponse.maximumLifetime))
        #expect(FormEncoding.parameters(of: request.url) == ["client_id": "cli", "request_uri": Self.uri])
    }

    @Test("client_secret_basic at the PAR endpoint: the Authorization header, no client_id or secret in the body")
    func basicAuthentication() async throws {
        let (client, stub) = try await Self.client(
            Self.created(#"{"request_uri":"\#(Self.uri)","expires_in":60}"#), authentication: .clientSecretBasic(secret: "s3cret"))
        defer { stub.close() }
        _ = try await client.beginAuthorization(redirectURI: StubOIDC.redirectURI)
        let push = try #require(stub.requests(to: "/par").first)
        #expect(push.headers["authorization"] == FormEncoding.basicAuthorization(clientID: "cli", secret: "s3cret"))
        #expect(push.form["client_id"] == nil && push.form["client_secret"] == nil)
        #expect(push.form["redirect_uri"] == StubOIDC.redirectURI)
    }

    @Test("a request_uri passed as an extra parameter is refused before anything is pushed")
    func requestURIParameterRefused() async throws {
        let (client, stub) = try await Self.client(Self.created(#"{"request_uri":"\#(Self.uri)","expires_in":60}"#))
        defer { stub.close() }
        await #expect {
            try await client.beginAuthorization(redirectURI: StubOIDC.redirectURI, additionalParameters: ["request_uri": "urn:x"])
        } throws: { ($0 as? AuthError)?.isInvalidConfiguration == true }
        #expect(stub.requests(to: "/par").isEmpty)
    }

    @Test("the choice against the provider: .never with PAR required, .always without an endpoint, required without an endpoint")
    func choices() async throws {
        let answer = Self.created(#"{"request_uri":"\#(Self.uri)","expires_in":60}"#)
        let (never, neverStub) = try await Self.client(answer, par: .never)
        await #expect(throws: AuthError.pushedAuthorizationRequired) { try await never.beginAuthorization(redirectURI: StubOIDC.redirectURI) }
        #expect(neverStub.requests(to: "/par").isEmpty)
        for (par, required) in [(PushedAuthorization.always, false), (.automatic, true)] {
            let (client, stub) = try await Self.client(answer, par: par, required: required, endpoint: false)
            await #expect { try await client.beginAuthorization(redirectURI: StubOIDC.redirectURI) } throws: {
                if case .unsupported = $0 as? AuthError { return true }
                return false
            }
            #expect(stub.requests.isEmpty)
        }
        // .never where PAR is merely allowed: a plain request with everything in the URL.
        let (plain, plainStub) = try await Self.client(answer, par: .never, required: false)
        let request = try await plain.beginAuthorization(redirectURI: StubOIDC.redirectURI)
        #expect(FormEncoding.parameters(of: request.url)["state"] == request.state)
        #expect(plainStub.requests(to: "/par").isEmpty)
    }

    @Test("a loopback sign-in whose browser never opens ends authorizationExpired when the request_uri dies, not at the timeout")
    func unopenedLoopbackSignIn() async throws {
        let (client, stub) = try await Self.client(Self.created(#"{"request_uri":"\#(Self.uri)","expires_in":1}"#))
        defer { stub.close() }
        try await withCeiling(.seconds(120), "the unopened sign-in") {
            await #expect(throws: AuthError.authorizationExpired) {
                try await client.signIn(browser: ClosureBrowserOpener { _ in }, timeout: .seconds(3600))
            }
        }
    }
}
