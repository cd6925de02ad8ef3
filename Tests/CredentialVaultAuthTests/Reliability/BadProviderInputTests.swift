import Logging
import CredentialVault
import Foundation
import Synchronization
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

/// Malformed redirect URLs and provider responses, each with the error it gets (the rows of
/// the bad-input catalogue in docs/SECURITY-EVIDENCE.md that no other test covers). A scripted
/// transport plays the provider; nothing here needs the network.
@Suite("Bad redirects and provider responses", .ownThread)
struct BadProviderInputTests {
    /// Answers the token and JWKS endpoints with canned responses.
    final class ScriptedTransport: HTTPTransport {
        let token: Mutex<HTTPResponse>
        let jwks: Mutex<HTTPResponse>
        init(token: HTTPResponse, jwks: HTTPResponse = HTTPResponse(status: 200, body: Data(#"{"keys":[]}"#.utf8))) {
            self.token = Mutex(token)
            self.jwks = Mutex(jwks)
        }
        func send(_ request: HTTPRequest) async throws(AuthError) -> HTTPResponse {
            request.url.path.hasSuffix("/jwks") ? jwks.withLock { $0 } : token.withLock { $0 }
        }
    }

    static let issuer = "http://127.0.0.1:1/issuer"
    static let redirectURI = "http://127.0.0.1:53682/callback"

    static func client(_ transport: ScriptedTransport) async throws -> OIDCClient {
        let configuration = OIDCConfiguration(
            issuer: URL(string: issuer)!, clientID: "cli",
            metadata: ProviderMetadata(
                issuer: issuer, authorizationEndpoint: URL(string: "\(issuer)/auth"), tokenEndpoint: URL(string: "\(issuer)/token")!,
                jwksURI: URL(string: "\(issuer)/jwks")))
        return try await OIDCClient(configuration: configuration, store: InMemoryStore(), transport: transport, logger: .credentialVaultSilent)
    }

    static func json(_ status: Int, _ text: String) -> HTTPResponse { HTTPResponse(status: status, body: Data(text.utf8)) }

    /// A fresh pending sign-in, then `query` (with its state substituted) as the redirect.
    static func redirect(_ client: OIDCClient, _ query: String, endpoint: String = redirectURI) async throws -> AuthError? {
        let request = try await client.beginAuthorization(redirectURI: redirectURI)
        let url = URL(string: "\(endpoint)?\(query.replacingOccurrences(of: "STATE", with: request.state))")!
        do {
            _ = try await client.handleRedirect(url: url)
            return nil
        } catch {
            return error
        }
    }

    @Test("redirect URLs: no state, unknown or reused state, foreign endpoint, mix-up, provider error, no code")
    func redirects() async throws {
        let client = try await Self.client(ScriptedTransport(token: Self.json(500, "")))
        #expect(try await Self.redirect(client, "code=x") == .stateMismatch)
        #expect(try await Self.redirect(client, "code=x&state=") == .stateMismatch)
        #expect(try await Self.redirect(client, "code=x&state=forged") == .stateMismatch)
        #expect(try await Self.redirect(client, "code=x&state=STATE", endpoint: "http://127.0.0.1:9999/callback") == .stateMismatch)
        #expect(try await Self.redirect(client, "code=x&state=STATE", endpoint: "http://evil.example/callback") == .stateMismatch)
        #expect(
            try await Self.redirect(client, "code=x&state=STATE&iss=https%3A%2F%2Fevil.example")
                == .invalidResponse("the redirect comes from another issuer (mix-up)"))
        #expect(try await Self.redirect(client, "error=access_denied&state=STATE") == .accessDenied)
        guard case .providerError(let code, _)? = try await Self.redirect(client, "error=server_error&error_description=x&state=STATE") else {
            Issue.record("a provider error in the redirect must be providerError")
            return
        }
        #expect(code == "server_error")
        #expect(try await Self.redirect(client, "state=STATE") == .invalidResponse("the redirect carries no code"))
        #expect(try await Self.redirect(client, "code=&state=STATE") == .invalidResponse("the redirect carries no code"))
    }

    @Test("token responses: not JSON, empty access token, a redirect, no ID token for openid, invalid JWKS", arguments: [
        (json(200, "<html>not json</html>"), nil, AuthError.invalidResponse("the token response is not the expected JSON")),
        (json(200, #"{"access_token":"","token_type":"bearer"}"#), nil, .invalidResponse("empty access_token")),
        (json(302, ""), nil, .invalidResponse("unexpected redirect (HTTP 302)")),
        (json(200, #"{"access_token":"at","token_type":"bearer","expires_in":60}"#), nil,
         .invalidResponse("the provider returned no ID token for an openid request")),
        (json(200, #"{"access_token":"at","token_type":"bearer","id_token":"a.b.c"}"#), json(200, "not json"),
         .invalidResponse("the provider's JWKS is invalid: invalid key: JWK Set is not valid JSON")),
    ] as [(HTTPResponse, HTTPResponse?, AuthError)])
    func tokenResponses(token: HTTPResponse, jwks: HTTPResponse?, expected: AuthError) async throws {
        let transport = jwks.map { ScriptedTransport(token: token, jwks: $0) } ?? ScriptedTransport(token: token)
        let client = try await Self.client(transport)
        let error = try await Self.redirect(client, "code=abc&state=STATE")
        #expect(error == expected)
    }

    @Test("an ID token that is not a JWT, or signed by no key of the JWKS, is invalidIDToken")
    func badIDTokens() async throws {
        for idToken in ["a.b.c", "not-a-token", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."] {
            let client = try await Self.client(ScriptedTransport(
                token: Self.json(200, #"{"access_token":"at","token_type":"bearer","id_token":"\#(idToken)"}"#)))
            guard case .invalidIDToken? = try await Self.redirect(client, "code=abc&state=STATE") else {
                Issue.record("\(idToken) must be refused as invalidIDToken")
                continue
            }
        }
    }
}
