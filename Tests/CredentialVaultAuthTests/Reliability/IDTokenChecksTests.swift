import CredentialVault
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

/// The code flow's ID token checks: the scopes of each sign-in (not the configuration's) decide
/// whether an ID token is required; a provider offering only algorithms this client does not
/// verify is a clear error; `at_hash` and `c_hash` are checked when present (`c_hash` only
/// when a code was exchanged); a refreshed ID token names the same subject, byte for byte.
@Suite("code flow: ID token requirements and checks", .ownThread)
struct IDTokenChecksTests {
    /// A provider on 127.0.0.1 whose token endpoint returns an ES256 ID token for the pending
    /// nonce (claims edited by `edit`, which also sees the code), and its JWKS.
    struct Fixture {
        let stub: StubProvider
        let client: OIDCClient
        let nonces = Recorder<String>()

        init(
            algorithms: [String]? = nil, scopes: [String] = ["openid"], access: String = "at",
            edit: @escaping @Sendable (inout [String: JSONValue], _ code: String) -> Void = { _, _ in }
        ) async throws {
            let nonces = self.nonces
            let jwks = try TokenFactory.json(.object(["keys": .array([.object(try TestKeys.key(for: .es256).jwk(kid: "k1"))])]))
            stub = try StubProvider { request in
                switch request.path {
                case "/jwks": return .http(status: 200, headers: ["Content-Type": "application/json"], body: jwks)
                case "/token":
                    let idToken = try? TokenFactory.idToken(.es256) { claims in
                        claims["iss"] = .string("http://" + (request.headers["host"] ?? ""))
                        claims["nonce"] = .string(nonces.all.last ?? "")
                        edit(&claims, request.form["code"] ?? "")
                    }
                    return StubOIDC.tokens(access: access, idToken: idToken)
                case "/revoke": return .http(status: 200, headers: [:], body: Data())
                default: return .notFound
                }
            }
            client = try await StubOIDC.client(stub, scopes: scopes, clock: ManualClock(start: TokenFactory.now)) {
                $0.idTokenSigningAlgValuesSupported = algorithms
            }
        }

        /// Signs in with `scopes` (default: the configured ones).
        func signIn(scopes: [String]? = nil) async throws -> AuthSession {
            let request = try await client.beginAuthorization(redirectURI: StubOIDC.redirectURI, scopes: scopes)
            nonces.append(FormEncoding.parameters(of: request.url)["nonce"] ?? "")
            return try await client.handleRedirect(url: URL(string: "\(StubOIDC.redirectURI)?code=c&state=\(request.state)")!)
        }
    }

    @Test("an ID token is required when this sign-in asked for openid, not when the configuration did")
    func perCallScopes() async throws {
        let noIDToken = try StubProvider { request in request.path == "/token" ? StubOIDC.tokens() : .notFound }
        let profileClient = try await StubOIDC.client(noIDToken, scopes: ["profile"])
        let request = try await profileClient.beginAuthorization(redirectURI: StubOIDC.redirectURI, scopes: ["openid"])
        await #expect(throws: AuthError.invalidResponse("the provider returned no ID token for an openid request")) {
            try await profileClient.handleRedirect(url: URL(string: "\(StubOIDC.redirectURI)?code=c&state=\(request.state)")!)
        }
        let openIDClient = try await StubOIDC.client(noIDToken, scopes: ["openid"])
        let other = try await openIDClient.beginAuthorization(redirectURI: StubOIDC.redirectURI, scopes: ["profile"])
        let session = try await openIDClient.handleRedirect(url: URL(string: "\(StubOIDC.redirectURI)?code=c&state=\(other.state)")!)
        #expect(session.accessToken == "at")
    }

    @Test("a provider that lists only algorithms this client does not verify is a clear error", arguments: [["HS256"], ["none", "PS256"], []])
    func onlyUnsupportedAlgorithms(algorithms: [String]) async throws {
        let fixture = try await Fixture(algorithms: algorithms)
        let error = await #expect(throws: AuthError.self) { try await fixture.signIn() }
        guard case .unsupported(let why)? = error else {
            Issue.record("expected unsupported, got \(String(describing: error))")
            return
        }
        #expect(why.contains("algorithms this client does not verify"))
        #expect(try await Fixture(algorithms: ["HS256", "ES256"]).signIn().user?.subject == "alice")
    }

    @Test("at_hash and c_hash are checked when present")
    func tokenHashes() async throws {
        let good = try await Fixture { claims, code in
            claims["at_hash"] = .string(TokenHash.claim(for: "at", algorithm: .es256))
            claims["c_hash"] = .string(TokenHash.claim(for: code, algorithm: .es256))
        }
        #expect(try await good.signIn().user?.subject == "alice")
        let badAccess = try await Fixture { claims, _ in claims["at_hash"] = .string(TokenHash.claim(for: "other", algorithm: .es256)) }
        await #expect(throws: AuthError.invalidIDToken("at_hash does not match the access token")) { try await badAccess.signIn() }
        let badCode = try await Fixture { claims, _ in claims["c_hash"] = .string(TokenHash.claim(for: "other", algorithm: .es256)) }
        await #expect(throws: AuthError.invalidIDToken("c_hash does not match the authorization code")) { try await badCode.signIn() }
        let notString = try await Fixture { claims, _ in claims["at_hash"] = .number(1) }
        await #expect(throws: AuthError.invalidIDToken("at_hash does not match the access token")) { try await notString.signIn() }
    }

    @Test("a refreshed ID token must name the same subject byte for byte (not merely canonically equal)")
    func refreshedSubjectExact() async throws {
        let fixture = try await Fixture { claims, code in claims["sub"] = .string(code.isEmpty ? "cafe\u{301}" : "caf\u{E9}") }
        #expect(try await fixture.signIn().user?.subject == "caf\u{E9}")
        await #expect(throws: AuthError.invalidIDToken("the refreshed ID token names another subject")) {
            _ = try await fixture.client.getAccessToken(forceRefresh: true)
        }
    }

    /// A refresh exchanges no code, so a `c_hash` in the refreshed ID token (a provider
    /// repeating the sign-in's claims) is not checked.
    @Test("c_hash is skipped when no code was exchanged (refresh)")
    func cHashWithoutCode() async throws {
        let fixture = try await Fixture { claims, _ in claims["c_hash"] = .string(TokenHash.claim(for: "c", algorithm: .es256)) }
        #expect(try await fixture.signIn().user?.subject == "alice")
        #expect(try await fixture.client.getAccessToken(forceRefresh: true) == "at")
        #expect(fixture.stub.requests(to: "/token").map { $0.form["grant_type"] } == ["authorization_code", "refresh_token"])
    }

    @Test("token hashes: the OIDC Core example, and SHA-512 for EdDSA")
    func hashVectors() {
        // OIDC Core A.3: access token "jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y" -> at_hash "77QmUPtjPfzWtF2AnpK9RQ" (RS256).
        #expect(TokenHash.claim(for: "jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y", algorithm: .rs256) == "77QmUPtjPfzWtF2AnpK9RQ")
        #expect(TokenHash.claim(for: "x", algorithm: .edDSA).count == 43)
    }
}
