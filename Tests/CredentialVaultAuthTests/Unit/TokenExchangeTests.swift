import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultAuth

/// RFC 8693 token exchange against a scripted stub provider (no local provider implements the
/// grant): what goes on the wire, what is believed of the answer, what is refused.
@Suite struct TokenExchangeTests {
    private static let exchanged = #"{"access_token":"issued-jwt","issued_token_type":"urn:ietf:params:oauth:token-type:jwt","token_type":"N_A","expires_in":60}"#

    /// The form fields of a request body, repeated fields in order.
    private static func fields(_ body: Data) -> [(String, String)] {
        String(decoding: body, as: UTF8.self).split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
    }

    private func client(_ stub: StubProvider, authentication: ClientAuthentication = .clientSecretBasic(secret: "s3cret"), dpop: Bool = false) async throws -> OIDCClient {
        var configuration = StubOIDC.configuration(stub)
        configuration.clientAuthentication = authentication
        configuration.dpop = dpop
        return try await OIDCClient(configuration: configuration, store: InMemoryStore(), logger: .credentialVaultSilent)
    }

    @Test func aDelegationRequestCarriesEveryFieldAndTheClientsAuthentication() async throws {
        let stub = try StubProvider { _ in .json(Self.exchanged) }
        let client = try await client(stub)
        let request = TokenExchangeRequest(
            subjectToken: "subject-at", subjectTokenType: .accessToken, actor: (token: "actor-jwt", type: .jwt),
            requestedTokenType: .jwt, resources: [URL(string: "HTTPS://API.Example.com:443/a")!, URL(string: "https://b.example/")!],
            audiences: ["billing", "ledger"], scopes: ["read", "write"])
        let result = try await client.exchangeToken(request)
        #expect(result.issuedToken == "issued-jwt")
        #expect(result.issuedTokenType == .jwt)
        #expect(result.tokenType == "N_A")
        #expect(result.expiresAt != nil)
        let sent = try #require(stub.requests(to: "/token").first)
        let form = Self.fields(sent.body)
        #expect(form.first { $0.0 == "grant_type" }?.1 == "urn:ietf:params:oauth:grant-type:token-exchange")
        #expect(form.first { $0.0 == "subject_token" }?.1 == "subject-at")
        #expect(form.first { $0.0 == "subject_token_type" }?.1 == "urn:ietf:params:oauth:token-type:access_token")
        #expect(form.first { $0.0 == "actor_token" }?.1 == "actor-jwt")
        #expect(form.first { $0.0 == "actor_token_type" }?.1 == "urn:ietf:params:oauth:token-type:jwt")
        #expect(form.first { $0.0 == "requested_token_type" }?.1 == "urn:ietf:params:oauth:token-type:jwt")
        #expect(form.filter { $0.0 == "resource" }.map(\.1) == ["https://api.example.com/a", "https://b.example/"], "each resource in canonical form")
        #expect(form.filter { $0.0 == "audience" }.map(\.1) == ["billing", "ledger"])
        #expect(form.first { $0.0 == "scope" }?.1 == "read write")
        #expect(sent.headers["authorization"]?.hasPrefix("Basic ") == true, "authenticated as every token request of the client")
    }

    @Test func aPublicClientSendsItsClientID() async throws {
        let stub = try StubProvider { _ in .json(Self.exchanged) }
        let client = try await client(stub, authentication: .none)
        _ = try await client.exchangeToken(TokenExchangeRequest(subjectToken: "t", subjectTokenType: .idToken))
        let form = Self.fields(try #require(stub.requests(to: "/token").first).body)
        #expect(form.first { $0.0 == "client_id" }?.1 == "cli")
        #expect(!form.contains { $0.0 == "actor_token" || $0.0 == "actor_token_type" || $0.0 == "resource" })
    }

    @Test(arguments: [
        (#"{"access_token":"x","token_type":"Bearer"}"#, "no issued_token_type"),
        (#"{"access_token":"x","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"N_A"}"#, "an access token that cannot be presented"),
        (#"{"access_token":"","issued_token_type":"urn:ietf:params:oauth:token-type:jwt","token_type":"N_A"}"#, "an empty token"),
        (#"{"access_token":"x","issued_token_type":"not a uri","token_type":"N_A"}"#, "an issued type that is no URI"),
        (#"{"access_token":"x","issued_token_type":"urn:ietf:params:oauth:token-type:jwt","token_type":"N_A","expires_in":-5}"#, "a negative lifetime"),
        (#"{"access_token":"x","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"DPoP"}"#, "a DPoP token to a request without a proof"),
        (#"[1,2"#, "not JSON"),
    ])
    func anAnswerThatIsNotAValidExchangeIsRefused(body: String, what: String) async throws {
        let stub = try StubProvider { _ in .json(body) }
        let client = try await client(stub)
        await #expect(throws: AuthError.self, "\(what)") {
            try await client.exchangeToken(TokenExchangeRequest(subjectToken: "t", subjectTokenType: .accessToken))
        }
        do {
            _ = try await client.exchangeToken(TokenExchangeRequest(subjectToken: "t", subjectTokenType: .accessToken))
        } catch {
            guard case .invalidResponse = error else { Issue.record("\(what): \(error), not invalidResponse"); return }
        }
    }

    @Test func theProvidersRefusalKeepsItsCode() async throws {
        let stub = try StubProvider { _ in .json(#"{"error":"invalid_target","error_description":"no such audience"}"#, status: 400) }
        let client = try await client(stub)
        do {
            _ = try await client.exchangeToken(TokenExchangeRequest(subjectToken: "t", subjectTokenType: .accessToken, audiences: ["x"]))
            Issue.record("a refused exchange returned")
        } catch {
            guard case .providerError(let code, _) = error else { Issue.record("\(error), not providerError"); return }
            #expect(code == "invalid_target")
        }
    }

    @Test func aRequestThatCannotBeSentIsRefusedBeforeAnythingIsSent() async throws {
        let stub = try StubProvider { _ in .json(Self.exchanged) }
        let client = try await client(stub)
        let bad: [(TokenExchangeRequest, String)] = [
            (TokenExchangeRequest(subjectToken: "", subjectTokenType: .accessToken), "an empty subject token"),
            (TokenExchangeRequest(subjectToken: "a\nb", subjectTokenType: .accessToken), "a line break in the subject token"),
            (TokenExchangeRequest(subjectToken: "t", subjectTokenType: .accessToken, actor: (token: "", type: .jwt)), "an empty actor token"),
            (TokenExchangeRequest(subjectToken: "t", subjectTokenType: .accessToken, resources: [URL(string: "ftp://x.example/")!]), "a resource that is not http(s)"),
            (TokenExchangeRequest(subjectToken: "t", subjectTokenType: .accessToken, audiences: ["a\u{7}"]), "a control character in an audience"),
            (TokenExchangeRequest(subjectToken: "t", subjectTokenType: .accessToken, scopes: ["two words"]), "a space in a scope"),
            (TokenExchangeRequest(subjectToken: "t", subjectTokenType: .accessToken, audiences: Array(repeating: "a", count: 33)), "too many audiences"),
            (TokenExchangeRequest(subjectToken: String(repeating: "t", count: 65_537), subjectTokenType: .accessToken), "a huge subject token"),
        ]
        for (request, what) in bad {
            do {
                _ = try await client.exchangeToken(request)
                Issue.record("\(what) was sent")
            } catch {
                #expect(error.isInvalidConfiguration, "\(what): \(error)")
            }
        }
        #expect(stub.requests(to: "/token").isEmpty)
    }

    /// RFC 8693 section 2.1 (as RFC 8707): a resource has no fragment; one with a fragment is
    /// refused rather than sent without it (the caller named something else), and so is one
    /// longer than a resource indicator may be, as everywhere else resources are sent.
    @Test func aResourceWithAFragmentOrTooLongIsRefusedNotRewritten() async throws {
        let stub = try StubProvider { _ in .json(Self.exchanged) }
        let client = try await client(stub)
        let long = "https://api.example/" + String(repeating: "a", count: ResourceURI.maximumIndicatorLength)
        for (resource, what) in [("https://api.example/#billing", "a fragment"), (long, "an over-long resource")] {
            let request = TokenExchangeRequest(subjectToken: "t", subjectTokenType: .accessToken, resources: [URL(string: resource)!])
            do {
                _ = try await client.exchangeToken(request)
                Issue.record("a resource with \(what) was sent")
            } catch {
                #expect(error.isInvalidConfiguration, "\(what): \(error)")
            }
        }
        #expect(stub.requests(to: "/token").isEmpty)
    }

    @Test func aDPoPConfigurationIsRefusedRatherThanGivenABearerToken() async throws {
        let stub = try StubProvider { _ in .json(Self.exchanged) }
        let client = try await client(stub, authentication: .none, dpop: true)
        await #expect(throws: AuthError.self) {
            try await client.exchangeToken(TokenExchangeRequest(subjectToken: "t", subjectTokenType: .accessToken))
        }
        #expect(stub.requests(to: "/token").isEmpty)
    }

    @Test func tokenTypeIdentifiersAreCheckedURIs() throws {
        #expect(try TokenTypeIdentifier("urn:example:cnf-token").uri == "urn:example:cnf-token")
        for bad in ["", "no-scheme", ":x", "urn:with space", "urn:\u{0}", "1urn:x", String(repeating: "u", count: 250) + ":xxxxxxx"] {
            #expect(throws: AuthError.self, "\(bad.prefix(20))") { try TokenTypeIdentifier(bad) }
        }
    }

    @Test func descriptionsNeverShowTheTokens() async throws {
        let request = TokenExchangeRequest(subjectToken: "subject-secret", subjectTokenType: .accessToken, actor: (token: "actor-secret", type: .jwt))
        #expect(!request.description.contains("secret"))
        let result = try TokenExchangeResult.decode(
            Data(#"{"access_token":"issued-secret","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer","refresh_token":"refresh-secret"}"#.utf8),
            now: Date())
        #expect(!result.description.contains("secret"))
        #expect(!"\(result)".contains("secret"))
    }
}
