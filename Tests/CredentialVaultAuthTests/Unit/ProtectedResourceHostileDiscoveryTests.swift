import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultAuth

/// Hostile resources and authorization servers against the MCP client profile's discovery,
/// identity and preparation: what the first 401 and the metadata may make the client ask for,
/// and which stored registration it may reuse.
@Suite("MCP client profile: hostile discovery (stub)")
struct ProtectedResourceHostileDiscoveryTests {
    /// The answer of a resource to a request without a token, with `header` as its challenge.
    static func challenge(_ header: String) -> HTTPResponse {
        HTTPResponse(status: 401, headers: ["www-authenticate": header])
    }

    @Test("the first challenge's scopes are held to the step-up's cap on how many scopes a sign-in asks for")
    func firstChallengeScopeCountCapped() async throws {
        let stub = try ProtectedResourceClientTests.stub()
        defer { stub.close() }
        let client = try ProtectedResourceClient(
            configuration: ProtectedResourceClientTests.configuration(stub, clientID: "pre"), store: InMemoryStore())
        let many = (0..<1000).map { "s\($0)" }.joined(separator: " ")
        let error = await #expect(throws: AuthError.self) { try await client.prepare(from: Self.challenge("Bearer scope=\"\(many)\"")) }
        guard case .invalidResponse? = error else {
            Issue.record("expected invalidResponse, got \(String(describing: error)); the sign-in would ask for \(await client.scopes.count) scopes")
            return
        }
    }

    @Test("the first challenge's scopes must be scope tokens, as the step-up's are")
    func firstChallengeScopesAreScopeTokens() async throws {
        for scope in ["read\tadmin", "caf\u{e9}", #"a\"b"#] {
            let stub = try ProtectedResourceClientTests.stub()
            defer { stub.close() }
            let client = try ProtectedResourceClient(
                configuration: ProtectedResourceClientTests.configuration(stub, clientID: "pre"), store: InMemoryStore())
            let error = await #expect(throws: AuthError.self) { try await client.prepare(from: Self.challenge("Bearer scope=\"\(scope)\"")) }
            guard case .invalidResponse? = error else {
                Issue.record("expected invalidResponse for \(scope.debugDescription), got \(String(describing: error)); scopes \(await client.scopes)")
                continue
            }
        }
    }

    @Test("a registration kept for one authorization server is not reused for another that names the same registration endpoint")
    func keptRegistrationNotReusedByAnotherIssuer() async throws {
        // The honest server registers the client and (as some servers do) gives it a secret.
        let honest = try ProtectedResourceClientTests.stub(
            register: .json(
                #"{"client_id":"honest-client","client_secret":"honest-secret","token_endpoint_auth_method":"client_secret_basic","redirect_uris":["http://127.0.0.1:53682/callback"]}"#,
                status: 201))
        defer { honest.close() }
        let store = InMemoryStore()
        let first = try ProtectedResourceClient(
            configuration: ProtectedResourceClientTests.configuration(honest, document: nil), store: store)
        try await first.prepare(from: nil)
        #expect(await first.identity?.clientID == "honest-client")

        // A hostile resource and authorization server (another origin, another issuer) whose
        // metadata names the honest server's registration endpoint.
        let hostile = try ProtectedResourceClientTests.stub(
            asMembers: #""registration_endpoint":"\#(honest.url("/register").absoluteString)""#, registration: false)
        defer { hostile.close() }
        let second = try ProtectedResourceClient(
            configuration: ProtectedResourceClientTests.configuration(hostile, document: nil), store: store)
        do {
            try await second.prepare(from: nil)
        } catch {
            return  // refusing a registration endpoint off the issuer's origin is a fix too
        }
        let identity = try #require(await second.identity)
        #expect(identity.clientID != "honest-client", "the honest server's client id is used at the hostile issuer")
        if case .clientSecretBasic = identity.clientAuthentication {
            Issue.record("the honest server's client secret would be sent to the hostile issuer's token endpoint")
        }
    }

    @Test("two concurrent preparations of one client register one client, not two")
    func concurrentPreparationsRegisterOnce() async throws {
        let stub = try ProtectedResourceClientTests.stub()
        defer { stub.close() }
        let client = try ProtectedResourceClient(
            configuration: ProtectedResourceClientTests.configuration(stub, document: nil), store: InMemoryStore())
        async let one: OIDCClient = client.prepare(from: nil)
        async let two: OIDCClient = client.prepare(from: nil)
        _ = try await (one, two)
        #expect(stub.requests(to: "/register").count == 1)
    }

    /// A browser that is never expected to open: a sign-in attempt fails the request.
    struct NoBrowser: BrowserOpener {
        func open(_ url: URL) async throws(AuthError) { throw .cancelled }
    }

    @Test("a session signed in for one resource is not sent to another resource of the same authorization server and client")
    func sessionOfOneResourceNotSentToAnother() async throws {
        // One authorization server, two resources (/honest and /hostile) naming it, one client id.
        let stub = try StubProvider { request in
            let base = "http://127.0.0.1:\(request.headers["host"]?.split(separator: ":").last ?? "0")"
            switch request.path {
            case "/.well-known/oauth-protected-resource/honest", "/.well-known/oauth-protected-resource/hostile":
                let name = request.path.split(separator: "/").last.map(String.init) ?? ""
                return .json(#"{"resource":"\#(base)/\#(name)","authorization_servers":["\#(base)"],"scopes_supported":["mcp"]}"#)
            case "/.well-known/oauth-authorization-server":
                return .json(
                    #"{"issuer":"\#(base)","authorization_endpoint":"\#(base)/authorize","token_endpoint":"\#(base)/token","jwks_uri":"\#(base)/jwks"}"#)
            case "/token": return StubOIDC.tokens(access: "token-for-honest")
            case "/honest", "/hostile":
                return request.headers["authorization"] == nil
                    ? .http(status: 401, headers: ["WWW-Authenticate": "Bearer"], body: Data()) : .json("{}")
            default: return .notFound
            }
        }
        defer { stub.close() }
        let store = InMemoryStore()
        func configuration(_ path: String) -> ProtectedResourceConfiguration {
            ProtectedResourceConfiguration(
                resource: stub.url(path), redirect: LoopbackRedirect(port: .fixed(53682)), clientID: "pre", requestTimeout: .seconds(5))
        }
        let honest = try ProtectedResourceClient(configuration: configuration("/honest"), store: store)
        try await StubOIDC.signIn(try await honest.prepare(from: nil))
        #expect(stub.requests(to: "/token").first?.form["resource"] == stub.url("/honest").absoluteString)

        let hostile = try ProtectedResourceClient(configuration: configuration("/hostile"), store: store)
        _ = try? await hostile.send(HTTPRequest(url: stub.url("/hostile"), timeout: .seconds(5)), browser: NoBrowser(), timeout: .seconds(5))
        let leaked = stub.requests.filter { $0.path == "/hostile" && $0.headers["authorization"] == "Bearer token-for-honest" }
        #expect(leaked.isEmpty, "the token issued for /honest was sent to /hostile")
    }
}
