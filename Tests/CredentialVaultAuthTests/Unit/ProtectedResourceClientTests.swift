import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultAuth

/// The MCP client profile against a stub playing both the protected resource and its
/// authorization server on one loopback origin: the client identity order, the Client ID
/// Metadata Document "as sent" (no local provider supports it), and hostile answers.
@Suite("MCP client profile (stub)")
struct ProtectedResourceClientTests {
    static let document = URL(string: "https://client.example.com/credvault/metadata.json")!

    /// A stub serving resource metadata for `/mcp` and authorization server metadata;
    /// `asMembers` adds members to the latter, `register` answers `/register`.
    static func stub(
        asMembers: String = "", registration: Bool = true, register: StubProvider.Reply? = nil,
        resource: String? = nil, authorizationServer: String? = nil
    ) throws -> StubProvider {
        try StubProvider { request in
            let base = "http://127.0.0.1:\(request.headers["host"]?.split(separator: ":").last ?? "0")"
            switch request.path {
            case "/.well-known/oauth-protected-resource/mcp":
                return .json(#"{"resource":"\#(resource ?? base + "/mcp")","authorization_servers":["\#(authorizationServer ?? base)"],"scopes_supported":["openid"]}"#)
            case "/.well-known/oauth-authorization-server":
                var members = [
                    #""issuer":"\#(authorizationServer ?? base)""#, #""authorization_endpoint":"\#(base)/authorize""#,
                    #""token_endpoint":"\#(base)/token""#, #""jwks_uri":"\#(base)/jwks""#,
                ]
                if registration { members.append(#""registration_endpoint":"\#(base)/register""#) }
                if !asMembers.isEmpty { members.append(asMembers) }
                return .json("{" + members.joined(separator: ",") + "}")
            case "/register":
                // RFC 7591 section 3.2.1: the answer repeats the registered metadata.
                guard let register else {
                    var members = (try? JSONValue.parse(request.body))?.objectValue ?? [:]
                    members["client_id"] = .string("dyn")
                    return .json(String(decoding: (try? JSONEncoder().encode(JSONValue.object(members))) ?? Data(), as: UTF8.self), status: 201)
                }
                return register
            case "/token": return StubOIDC.tokens()
            default: return .notFound
            }
        }
    }

    static func configuration(_ stub: StubProvider, clientID: String? = nil, document: URL? = document) -> ProtectedResourceConfiguration {
        ProtectedResourceConfiguration(
            resource: stub.url("/mcp"), redirect: LoopbackRedirect(port: .fixed(53682)), clientID: clientID,
            clientMetadataDocument: document, requestTimeout: .seconds(5))
    }

    static func clientID(of request: AuthorizationRequest) -> String? {
        URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "client_id" }?.value
    }

    @Test("the client metadata document URL is sent as client_id when the authorization server supports it")
    func metadataDocumentSentAsClientID() async throws {
        let stub = try Self.stub(asMembers: #""client_id_metadata_document_supported":true"#)
        defer { stub.close() }
        let client = try ProtectedResourceClient(configuration: Self.configuration(stub), store: InMemoryStore())
        let oidc = try await client.prepare(from: nil)
        guard case .metadataDocument(let url)? = await client.identity else {
            Issue.record("expected the metadata document identity")
            return
        }
        #expect(url == Self.document)
        let request = try await oidc.beginAuthorization(redirectURI: StubOIDC.redirectURI)
        #expect(Self.clientID(of: request) == Self.document.absoluteString)
        #expect(stub.requests(to: "/register").isEmpty)
    }

    @Test("without client_id_metadata_document_supported the client registers dynamically instead of sending the document URL")
    func metadataDocumentGatedByTheServerFlag() async throws {
        for flag in ["", #""client_id_metadata_document_supported":false"#] {
            let stub = try Self.stub(asMembers: flag)
            defer { stub.close() }
            let store = InMemoryStore()
            let client = try ProtectedResourceClient(configuration: Self.configuration(stub), store: store)
            let oidc = try await client.prepare(from: nil)
            let request = try await oidc.beginAuthorization(redirectURI: StubOIDC.redirectURI)
            #expect(Self.clientID(of: request) == "dyn")
            let registered = try #require(stub.requests(to: "/register").first)
            let metadata = try JSONValue.parse(registered.body)
            #expect(metadata["redirect_uris"]?.arrayValue?.first?.stringValue == "http://127.0.0.1:53682/callback")
            #expect(metadata["token_endpoint_auth_method"]?.stringValue == "none")
            let key = Self.configuration(stub).registrationKey(issuer: URL(string: stub.base)!, endpoint: stub.url("/register"))
            #expect(try await RegisteredClient.load(from: store, key: key)?.clientID == "dyn")
        }
    }

    @Test("a kept registration is reused: the second client of the same store registers nothing")
    func keptRegistrationReused() async throws {
        let stub = try Self.stub()
        defer { stub.close() }
        let store = InMemoryStore()
        for _ in 0..<2 {
            let client = try ProtectedResourceClient(configuration: Self.configuration(stub, document: nil), store: store)
            try await client.prepare(from: nil)
            #expect(await client.identity?.clientID == "dyn")
        }
        #expect(stub.requests(to: "/register").count == 1)
    }

    @Test("a pre-registered client id comes before the metadata document and registration")
    func preRegisteredFirst() async throws {
        let stub = try Self.stub(asMembers: #""client_id_metadata_document_supported":true"#)
        defer { stub.close() }
        let client = try ProtectedResourceClient(configuration: Self.configuration(stub, clientID: "pre"), store: InMemoryStore())
        let oidc = try await client.prepare(from: nil)
        #expect(Self.clientID(of: try await oidc.beginAuthorization(redirectURI: StubOIDC.redirectURI)) == "pre")
        #expect(stub.requests(to: "/register").isEmpty)
    }

    @Test("a registration answer without client_id is refused and nothing is stored")
    func registrationWithoutClientIDRefused() async throws {
        let stub = try Self.stub(register: .json(#"{"client_secret":"s","registration_access_token":"t"}"#, status: 201))
        defer { stub.close() }
        let store = InMemoryStore()
        let client = try ProtectedResourceClient(configuration: Self.configuration(stub, document: nil), store: store)
        let error = await #expect(throws: AuthError.self) { try await client.prepare(from: nil) }
        guard case .invalidResponse? = error else {
            Issue.record("expected invalidResponse, got \(String(describing: error))")
            return
        }
        #expect(try await store.listKeys(service: nil).isEmpty)
        #expect(await client.oidcClient == nil)
    }

    @Test("without a client id, an accepted metadata document or a registration endpoint the profile is unsupported")
    func noIdentityUnsupported() async throws {
        let stub = try Self.stub(registration: false)
        defer { stub.close() }
        let client = try ProtectedResourceClient(configuration: Self.configuration(stub), store: InMemoryStore())
        let error = await #expect(throws: AuthError.self) { try await client.prepare(from: nil) }
        guard case .unsupported? = error else {
            Issue.record("expected unsupported, got \(String(describing: error))")
            return
        }
    }

    @Test("metadata naming another resource is refused before any registration")
    func otherResourceRefused() async throws {
        let stub = try Self.stub(resource: "http://127.0.0.1:1/mcp")
        defer { stub.close() }
        let store = InMemoryStore()
        let client = try ProtectedResourceClient(configuration: Self.configuration(stub, document: nil), store: store)
        let error = await #expect(throws: AuthError.self) { try await client.prepare(from: nil) }
        guard case .discoveryFailed? = error else {
            Issue.record("expected discoveryFailed, got \(String(describing: error))")
            return
        }
        #expect(stub.requests(to: "/register").isEmpty)
        #expect(try await store.listKeys(service: nil).isEmpty)
    }

    @Test("an https resource whose metadata names a plain-http authorization server is refused")
    func plainHTTPServerForHTTPSResourceRefused() async throws {
        let stub = try Self.stub(resource: "https://mcp.example.com/mcp", authorizationServer: "http://as.example.com")
        defer { stub.close() }
        let configuration = ProtectedResourceConfiguration(resource: URL(string: "https://mcp.example.com/mcp")!, requestTimeout: .seconds(5))
        let client = try ProtectedResourceClient(configuration: configuration, store: InMemoryStore(), transport: RoutingTransport(stub: stub))
        let error = await #expect(throws: AuthError.self) { try await client.prepare(from: nil) }
        guard case .discoveryFailed? = error else {
            Issue.record("expected discoveryFailed, got \(String(describing: error))")
            return
        }
        #expect(stub.requests(to: "/.well-known/oauth-authorization-server").isEmpty)
    }

    @Test("a malformed or oversized challenge in the resource's 401 is refused and nothing is stored")
    func hostileChallengeRefused() async throws {
        for header in [#"Bearer resource_metadata="unterminated"#, "Bearer realm=\"" + String(repeating: "x", count: 9000) + "\"",
                       #"Bearer scope="a", scope="b""#] {
            let resource = try StubProvider { request in
                request.path == "/mcp" ? .http(status: 401, headers: ["WWW-Authenticate": header], body: Data()) : .notFound
            }
            defer { resource.close() }
            let store = InMemoryStore()
            let client = try ProtectedResourceClient(
                configuration: ProtectedResourceConfiguration(resource: resource.url("/mcp"), requestTimeout: .seconds(5)), store: store)
            let error = await #expect(throws: AuthError.self) { _ = try await client.send(HTTPRequest(url: resource.url("/mcp"), timeout: .seconds(5))) }
            guard case .invalidResponse? = error else {
                Issue.record("expected invalidResponse, got \(String(describing: error))")
                return
            }
            #expect(try await store.listKeys(service: nil).isEmpty)
            #expect(resource.requests.map(\.path) == ["/mcp"])
        }
    }

    @Test("the resource's token is never sent off the resource's origin")
    func tokenStaysOnTheResource() async throws {
        let stub = try Self.stub()
        defer { stub.close() }
        let client = try ProtectedResourceClient(configuration: Self.configuration(stub, clientID: "pre"), store: InMemoryStore())
        try await client.prepare(from: nil)
        for url in ["http://127.0.0.1:1/mcp", "http://localhost:\(stub.port)/mcp", "https://127.0.0.1:\(stub.port)/mcp"] {
            await #expect(throws: AuthError.self) { _ = try await client.authorizationHeaders(for: URL(string: url)!, method: "GET") }
            await #expect(throws: AuthError.self) { _ = try await client.send(HTTPRequest(url: URL(string: url)!, timeout: .seconds(5))) }
        }
        await #expect(throws: AuthError.notSignedIn) { _ = try await client.authorizationHeaders(for: stub.url("/mcp/tools"), method: "GET") }
        #expect(stub.requests.allSatisfy { !$0.path.hasPrefix("/mcp") })
    }

    @Test("a client metadata document URL that is not https with a path is refused at configuration")
    func metadataDocumentURLChecked() {
        for text in ["http://client.example.com/doc.json", "https://client.example.com", "https://client.example.com/doc#x",
                     "https://user@client.example.com/doc"] {
            var configuration = ProtectedResourceConfiguration(resource: URL(string: "https://mcp.example.com/mcp")!)
            configuration.clientMetadataDocument = URL(string: text)!
            #expect(throws: AuthError.self) { _ = try ProtectedResourceClient(configuration: configuration, store: InMemoryStore()) }
        }
    }

    @Test("the step-up reads the scopes of an insufficient_scope challenge and refuses hostile ones")
    func stepUpChallenge() throws {
        func response(_ status: Int, _ header: String) -> HTTPResponse { HTTPResponse(status: status, headers: ["www-authenticate": header]) }
        #expect(try ScopeStepUp.requestedScopes(in: response(403, #"Bearer error="insufficient_scope", scope="mcp files:read""#)) == ["mcp", "files:read"])
        #expect(try ScopeStepUp.requestedScopes(in: response(401, #"DPoP error="insufficient_scope", scope="mcp""#)) == ["mcp"])
        #expect(try ScopeStepUp.requestedScopes(in: response(401, #"Bearer error="invalid_token""#)) == nil)
        #expect(try ScopeStepUp.requestedScopes(in: response(200, #"Bearer error="insufficient_scope", scope="mcp""#)) == nil)
        #expect(throws: AuthError.self) { try ScopeStepUp.requestedScopes(in: response(403, "Bearer scope=\"" + String(repeating: "a ", count: 5000) + "\"")) }
        #expect(throws: AuthError.self) { try ScopeStepUp.requestedScopes(in: response(403, #"Bearer error="insufficient_scope", scope="a\"b""#)) }
        #expect(throws: AuthError.self) { try ScopeStepUp.requestedScopes(in: response(403, #"Bearer error="insufficient_scope", scope="caf\#u{e9}""#)) }
        #expect(try ScopeStepUp.union(["openid", "mcp"], ["mcp", "files"]) == ["openid", "mcp", "files"])
        #expect(throws: AuthError.self) { try ScopeStepUp.union([], (0..<65).map { "s\($0)" }) }
    }

    @Test("a session resource is sent at the authorization request, the code exchange and every refresh")
    func sessionResourceInEveryRequest() async throws {
        let stub = try StubProvider { request in request.path == "/token" ? StubOIDC.tokens() : .notFound }
        defer { stub.close() }
        var configuration = StubOIDC.configuration(stub)
        configuration.sessionResource = URL(string: "HTTPS://MCP.example.com:443/mcp")!
        let client = try await OIDCClient(configuration: configuration, store: InMemoryStore(), logger: .credentialVaultSilent)
        let request = try await client.beginAuthorization(redirectURI: StubOIDC.redirectURI)
        let query = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(query.filter { $0.name == "resource" }.map(\.value) == ["https://mcp.example.com/mcp"])
        try await client.handleRedirect(url: URL(string: "\(StubOIDC.redirectURI)?code=c&state=\(request.state)")!)
        _ = try await client.getAccessToken(forceRefresh: true)
        let tokens = stub.requests(to: "/token")
        #expect(tokens.map { $0.form["grant_type"] } == ["authorization_code", "refresh_token"])
        #expect(tokens.map { $0.form["resource"] } == ["https://mcp.example.com/mcp", "https://mcp.example.com/mcp"])
    }

    @Test("without a session resource the code exchange and refresh name no resource")
    func noSessionResourceByDefault() async throws {
        let stub = try StubProvider { request in request.path == "/token" ? StubOIDC.tokens() : .notFound }
        defer { stub.close() }
        let client = try await StubOIDC.client(stub)
        try await StubOIDC.signIn(client)
        _ = try await client.getAccessToken(forceRefresh: true)
        #expect(stub.requests(to: "/token").allSatisfy { $0.form["resource"] == nil })
    }
}
