import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

// Nested in the serialized glewlwyd suite: these tests sign the provider's user in like the
// other glewlwyd suites, and a loopback sign-in run in parallel with them timed out.
extension GlewlwydTests {
    /// From a protected resource's 401 to glewlwyd's metadata (the MCP authorization profile),
    /// with the test resource server validating glewlwyd's access tokens.
    @Suite("protected resource discovery (glewlwyd)")
    struct ResourceDiscovery {
        /// A resource server trusting `issuer` (default: the registration plugin, whose tokens no
        /// other suite counts in the provider's log).
        static func server(
            _ provider: Glewlwyd, issuer: URL? = nil, requiredScope: String? = nil, publishedResource: String? = nil
        ) async throws -> TestResourceServer {
            let issuer = issuer ?? GlewlwydTests.Registration.issuer(provider)
            let data = try await URLSessionTransport().send(HTTPRequest(url: issuer.appendingPathComponent("jwks"), timeout: .seconds(10))).body
            let keys = try JSONWebKeySet(json: data)
            return try TestResourceServer(policy: .init(
                issuer: issuer, keys: keys, requiredScope: requiredScope, publishedResource: publishedResource))
        }

        static func call(_ server: TestResourceServer, token: String? = nil) async throws -> HTTPResponse {
            try await URLSessionTransport().send(HTTPRequest(
                url: server.resource, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:], timeout: .seconds(10)))
        }

        @Test("a 401 without a token leads through the resource metadata to glewlwyd's issuer-checked metadata")
        func fromChallengeToIssuer() async throws {
            let provider = try Glewlwyd.require()
            let server = try await Self.server(provider, issuer: provider.issuer)
            defer { server.stop() }
            let unauthorized = try await Self.call(server)
            #expect(unauthorized.status == 401)
            let found = try await ResourceAuthorizationDiscovery().discover(resource: server.resource, response: unauthorized)
            #expect(found.resource == server.resource)
            #expect(found.issuer == provider.issuer)
            #expect(found.providerMetadata.issuer == provider.issuer.absoluteString)
            #expect(found.providerMetadata.tokenEndpoint.absoluteString.hasPrefix(provider.issuer.absoluteString))
            #expect(found.scopes == ["openid"])
        }

        @Test("the well-known URL is used when the challenge names no metadata")
        func wellKnownWithoutChallenge() async throws {
            let provider = try Glewlwyd.require()
            let server = try await Self.server(provider)
            defer { server.stop() }
            let found = try await ResourceAuthorizationDiscovery().discover(resource: server.resource, challenge: nil)
            #expect(found.issuer == GlewlwydTests.Registration.issuer(provider))
            #expect(found.providerMetadata.registrationEndpoint != nil)
        }

        @Test("metadata naming another resource is refused")
        func otherResourceRefused() async throws {
            let provider = try Glewlwyd.require()
            let server = try await Self.server(provider, publishedResource: "http://127.0.0.1:1/mcp")
            defer { server.stop() }
            let unauthorized = try await Self.call(server)
            let error = await #expect(throws: AuthError.self) {
                _ = try await ResourceAuthorizationDiscovery().discover(resource: server.resource, response: unauthorized)
            }
            guard case .discoveryFailed? = error else {
                Issue.record("expected discoveryFailed, got \(String(describing: error))")
                return
            }
        }

        @Test("the resource server accepts glewlwyd's access token, refuses a forged one, and asks for a missing scope with 403")
        func tokensAtTheResource() async throws {
            let provider = try Glewlwyd.require()
            let (registration, client, session, _) = try await GlewlwydTests.Registration.signInRegistered(provider)

            let open = try await Self.server(provider, requiredScope: "openid")
            defer { open.stop() }
            #expect(try await Self.call(open, token: session.accessToken).status == 200)
            let parts = session.accessToken.split(separator: ".")
            let forged = parts[0] + "." + parts[1] + "." + String(parts[2].reversed())
            let refused = try await Self.call(open, token: forged)
            #expect(refused.status == 401)
            #expect(try AuthenticationChallenge.parse(refused).first?.error == "invalid_token")

            let strict = try await Self.server(provider, requiredScope: "mcp:write")
            defer { strict.stop() }
            let forbidden = try await Self.call(strict, token: session.accessToken)
            #expect(forbidden.status == 403)
            let challenge = try #require(try AuthenticationChallenge.parse(forbidden).first)
            #expect(challenge.isScheme("bearer"))
            #expect(challenge.error == "insufficient_scope")
            #expect(challenge.scopes == ["mcp:write"])
            #expect(challenge.resourceMetadata == strict.metadataURL)
            try await registration.delete(client)
        }
    }
}
