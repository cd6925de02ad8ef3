import Foundation
import Testing

@testable import CredentialVaultAuth

/// `WWW-Authenticate` parsing (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9449 §7.1, RFC 9728 §5.1)
/// on well-formed and hostile input.
@Suite("WWW-Authenticate challenges")
struct ResourceChallengeTests {
    @Test("a Bearer challenge with resource_metadata, scope and an error")
    func bearer() throws {
        let challenges = try AuthenticationChallenge.parse(
            #"Bearer realm="mcp", error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp""#)
        #expect(challenges.count == 1)
        let challenge = try #require(challenges.first)
        #expect(challenge.isScheme("bearer"))
        #expect(challenge.realm == "mcp")
        #expect(challenge.error == "insufficient_scope")
        #expect(challenge.scopes == ["files:read", "files:write"])
        #expect(challenge.resourceMetadata?.absoluteString == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
    }

    @Test("two challenges in one value, DPoP with algs and a token-form parameter, names case-insensitive")
    func dpopAndBearer() throws {
        let challenges = try AuthenticationChallenge.parse(
            #"DPoP ERROR=use_dpop_nonce, error_description="Resource server requires nonce in DPoP proof", algs="ES256 EdDSA", Bearer realm="x""#)
        #expect(challenges.map(\.scheme) == ["DPoP", "Bearer"])
        #expect(challenges[0].error == "use_dpop_nonce")
        #expect(challenges[0].errorDescription == "Resource server requires nonce in DPoP proof")
        #expect(challenges[0].algorithms == ["ES256", "EdDSA"])
        #expect(challenges[1].realm == "x")
    }

    @Test("quoted strings keep escaped quotes and backslashes; bare schemes and token68 parse")
    func escapesAndForms() throws {
        let escaped = try AuthenticationChallenge.parse(#"Bearer error_description="a \"quoted\" \\ word""#)
        #expect(escaped.first?.errorDescription == #"a "quoted" \ word"#)
        let bare = try AuthenticationChallenge.parse("Basic, Bearer")
        #expect(bare.map(\.scheme) == ["Basic", "Bearer"])
        #expect(bare.allSatisfy { $0.parameters.isEmpty })
        let token68 = try AuthenticationChallenge.parse("Negotiate abc/def==, Bearer error=invalid_token")
        #expect(token68.first?.token68 == "abc/def==")
        #expect(token68.last?.error == "invalid_token")
    }

    @Test("malformed values are refused with a typed error", arguments: [
        #"Bearer error="unterminated"#,
        #"Bearer error="x", error="y""#,
        #"Bearer error="bad \#u{01} control""#,
        "Bearer realm=\"a\", error=",
        "Bearer error=\"a\" scope=\"b\"",
        "=Bearer",
        "Bearer @",
        String(repeating: "a", count: AuthenticationChallenge.maximumHeaderLength + 1),
        (0..<40).map { "S\($0)" }.joined(separator: ", "),
        "Bearer " + (0..<40).map { "p\($0)=v" }.joined(separator: ", "),
    ])
    func malformed(_ header: String) {
        #expect(throws: AuthError.self) { _ = try AuthenticationChallenge.parse(header) }
    }

    @Test("a resource_metadata that is not an absolute http(s) URL is ignored")
    func unusableMetadataURL() throws {
        for value in ["javascript:alert(1)", "/relative", "file:///etc/passwd", ""] {
            let challenge = try #require(try AuthenticationChallenge.parse("Bearer resource_metadata=\"\(value)\"").first)
            #expect(challenge.resourceMetadata == nil)
        }
    }

    @Test("random and mutated headers never trap")
    func hostileBytes() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(#"Bearer DPoP = , " \ a z 0 9 / ~ scope resource_metadata error"#.utf8) + [0, 9, 0x7F, 0xC3, 0xFF]
        for _ in 0..<2000 {
            let count = Int.random(in: 0..<200, using: &generator)
            let bytes = (0..<count).map { _ in alphabet.randomElement(using: &generator)! }
            _ = try? AuthenticationChallenge.parse(String(decoding: bytes, as: UTF8.self))
        }
    }
}

/// Canonical resource URIs (RFC 8707, MCP) and RFC 9728 well-known URLs.
@Suite("resource identifiers")
struct ResourceURITests {
    @Test("scheme and host lower-cased, fragment and default port dropped, path and query kept")
    func canonical() throws {
        let url = try ResourceURI.canonical(URL(string: "HTTPS://MCP.Example.COM:443/Server/MCP?x=1#frag")!)
        #expect(url.absoluteString == "https://mcp.example.com/Server/MCP?x=1")
        #expect(try ResourceURI.canonical(URL(string: "http://127.0.0.1:80/mcp")!).absoluteString == "http://127.0.0.1/mcp")
        #expect(try ResourceURI.canonical(URL(string: "http://127.0.0.1:8080/mcp/")!).absoluteString == "http://127.0.0.1:8080/mcp/")
    }

    @Test("non-http schemes and user information are refused")
    func refused() {
        for text in ["ftp://example.com/x", "urn:example:resource", "https://user:pass@example.com/mcp"] {
            #expect(throws: AuthError.self) { _ = try ResourceURI.canonical(URL(string: text)!) }
        }
    }

    @Test("the RFC 9728 well-known URL is inserted between host and path")
    func wellKnown() throws {
        #expect(try ResourceURI.metadataURL(for: URL(string: "https://example.com/")!).absoluteString
            == "https://example.com/.well-known/oauth-protected-resource")
        #expect(try ResourceURI.metadataURL(for: URL(string: "https://example.com/mcp/v1?tenant=a")!).absoluteString
            == "https://example.com/.well-known/oauth-protected-resource/mcp/v1?tenant=a")
    }

    @Test("authorization server metadata is tried by RFC 8414, then OIDC inserted, then OIDC appended")
    func authorizationServerOrder() {
        let urls = ResourceAuthorizationDiscovery.metadataURLs(for: URL(string: "https://auth.example.com/tenant1")!)
        #expect(urls.map(\.absoluteString) == [
            "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
            "https://auth.example.com/.well-known/openid-configuration/tenant1",
            "https://auth.example.com/tenant1/.well-known/openid-configuration",
        ])
        #expect(ResourceAuthorizationDiscovery.metadataURLs(for: URL(string: "https://auth.example.com")!).count == 2)
    }
}

/// Protected resource metadata and registration answers read as hostile input.
@Suite("resource metadata and registration responses")
struct HostileDocumentTests {
    @Test("protected resource metadata: well-formed, then wrong types, duplicates and oversized lists refused")
    func resourceMetadata() throws {
        let good = try ProtectedResourceMetadata.parse(Data(
            #"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":["a"],"dpop_bound_access_tokens_required":true}"#.utf8))
        #expect(good.authorizationServers.map(\.absoluteString) == ["https://auth.example.com"])
        #expect(good.dpopBoundAccessTokensRequired)
        let list = (0..<100).map { "\"s\($0)\"" }.joined(separator: ",")
        for bad in [
            "[]", "{}", #"{"resource":1}"#, #"{"resource":"a","resource":"b"}"#,
            #"{"resource":"a","authorization_servers":"https://x"}"#, #"{"resource":"a","authorization_servers":["not a url"]}"#,
            #"{"resource":"a","scopes_supported":[\#(list)]}"#, #"{"resource":"a","dpop_bound_access_tokens_required":"yes"}"#,
            String(repeating: "[", count: 500), "{\"resource\":\"" + String(repeating: "x", count: 70_000) + "\"}",
        ] {
            #expect(throws: AuthError.self) { _ = try ProtectedResourceMetadata.parse(Data(bad.utf8)) }
        }
    }

    @Test("a registration answer: secrets redacted, another origin's management URI and wrong types refused")
    func registrationResponse() throws {
        let endpoint = URL(string: "https://auth.example.com/register")!
        let client = try RegistrationResponse.parse(Data(
            #"{"client_id":"abc","client_secret":"s3cr3t-value","client_secret_expires_at":0,"registration_access_token":"t0k3n-value","registration_client_uri":"https://AUTH.example.com:443/register/abc","client_name":"n"}"#.utf8),
            endpoint: endpoint)
        #expect(client.clientSecret?.reveal() == "s3cr3t-value")
        #expect(client.clientSecretExpiresAt == nil)
        #expect(client.metadata["client_secret"] == nil)
        #expect(client.metadata["registration_access_token"] == nil)
        #expect(!"\(client)".contains("s3cr3t") && !"\(client)".contains("t0k3n"))
        #expect(!"\(String(describing: client.clientSecret))".contains("s3cr3t"))
        for bad in [
            #"{"client_secret":"x"}"#, #"{"client_id":""}"#, #"{"client_id":7}"#, #"{"client_id":"a","client_id":"b"}"#,
            #"{"client_id":"a","registration_client_uri":"https://evil.example.com/register/a"}"#,
            #"{"client_id":"a","registration_client_uri":"http://auth.example.com/register/a"}"#,
            #"{"client_id":"a","client_secret_expires_at":"never"}"#, #"{"client_id":"a","client_secret_expires_at":-1}"#,
            "{\"client_id\":\"a\\u0000b\"}", "not json",
        ] {
            #expect(throws: AuthError.self) { _ = try RegistrationResponse.parse(Data(bad.utf8), endpoint: endpoint) }
        }
    }

    @Test("public native metadata asks for no secret in both RFC and glewlwyd terms")
    func publicNativeMetadata() {
        let json = ClientMetadata.publicNative(redirectURIs: ["http://127.0.0.1:1234/callback"]).json()
        #expect(json["token_endpoint_auth_method"]?.stringValue == "none")
        #expect(json["client_confidential"]?.boolValue == false)
        #expect(json["application_type"]?.stringValue == "native")
        #expect(ClientMetadata(redirectURIs: []).json()["redirect_uris"] == nil)
    }
}
