import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

// Nested in the serialized glewlwyd suite: these tests sign the provider's user in like the
// other glewlwyd suites, and a loopback sign-in run in parallel with them timed out.
extension GlewlwydTests {
    /// The MCP client profile end to end: the test resource server (on a port plugin "reg"
    /// issues tokens for) answers 401, the client discovers glewlwyd's `reg` plugin, registers
    /// itself dynamically (or uses a pre-registered id), signs in with the resource in every
    /// request, and the resource server validates the JWT access tokens (signature by
    /// glewlwyd's JWKS, `iss`, `exp`, `aud` = the resource) and DPoP proofs.
    @Suite("MCP client profile (glewlwyd)")
    struct MCPProfile {
        static func server(
            _ provider: Glewlwyd, requiredScope: String? = nil, dpop: DPoPProofValidator? = nil, alwaysInsufficient: Bool = false
        ) async throws -> TestResourceServer {
            let issuer = GlewlwydTests.Registration.issuer(provider)
            let data = try await URLSessionTransport().send(HTTPRequest(url: issuer.appendingPathComponent("jwks"), timeout: .seconds(10))).body
            return try TestResourceServer(policy: .init(
                issuer: issuer, keys: try JSONWebKeySet(json: data), requiredScope: requiredScope, expectsAudience: true, dpop: dpop,
                alwaysInsufficient: alwaysInsufficient, ports: TestResourceServer.provisionedPorts))
        }

        static func configuration(
            _ server: TestResourceServer, port: UInt16, clientID: String? = nil, dpop: Bool = false, maximumStepUps: Int = 2
        ) -> ProtectedResourceConfiguration {
            var configuration = ProtectedResourceConfiguration(
                resource: server.resource, redirect: LoopbackRedirect(port: .fixed(port)), clientID: clientID,
                clientName: "CredentialVault MCP test", dpop: dpop, maximumStepUps: maximumStepUps)
            configuration.session = SessionManager.Configuration(proactiveRefresh: false)
            return configuration
        }

        /// Deletes the client registered during a test at the provider.
        static func unregister(_ client: ProtectedResourceClient) async throws {
            guard case .registered(let registered)? = await client.identity else { return }
            try await ClientRegistration(endpoint: registered.registrationEndpoint).delete(registered)
        }

        @Test("from a 401 the client discovers glewlwyd, registers dynamically, and calls the resource with a token for it, refreshed with the resource")
        func discoverRegisterSignInAndCall() async throws {
            let provider = try Glewlwyd.require()
            let server = try await Self.server(provider, requiredScope: "openid")
            defer { server.stop() }
            let store = InMemoryStore()
            let client = try ProtectedResourceClient(
                configuration: Self.configuration(server, port: try GlewlwydTests.Registration.freePort()), store: store)
            let browser = try await TestBrowser.signIn(provider)
            let pages = PageBox()
            let response = try await client.send(
                HTTPRequest(url: server.resource, timeout: .seconds(10)), browser: browser.consentingOpener(pages: pages), timeout: .seconds(30))
            #expect(response.status == 200)
            #expect(server.answeredStatuses == [401, 200])
            #expect(try await pages.result().status == 200)
            guard case .registered(let registered)? = await client.identity else {
                Issue.record("expected a dynamically registered client")
                return
            }
            #expect(registered.clientSecret == nil)
            let authorization = try #require(await client.authorization)
            #expect(authorization.resource == server.resource)
            #expect(authorization.issuer == GlewlwydTests.Registration.issuer(provider))

            // The token's audience is the resource (the server checks it); a refresh asks for
            // the resource again, so the new token is accepted too.
            let oidc = try #require(await client.oidcClient)
            let before = try await oidc.getAccessToken()
            let after = try await oidc.getAccessToken(forceRefresh: true)
            #expect(before != after)
            let claims = try JSONWebToken(compactSerialization: after).claims
            #expect(claims["aud"]?.stringValue == server.resource.absoluteString)
            #expect(try await client.send(HTTPRequest(url: server.resource, timeout: .seconds(10))).status == 200)

            // Another client on the same store (a later process) reuses the registration and
            // the session: no registration, no browser.
            let later = try ProtectedResourceClient(
                configuration: client.configuration, store: store)
            let noBrowser = ClosureBrowserOpener { _ in Issue.record("a kept session needs no sign-in") }
            #expect(try await later.send(HTTPRequest(url: server.resource, timeout: .seconds(10)), browser: noBrowser).status == 200)
            #expect(await later.identity?.clientID == registered.clientID)
            try await Self.unregister(client)
        }

        @Test("a pre-registered client id is used without registering")
        func preRegisteredClient() async throws {
            let provider = try Glewlwyd.require()
            let server = try await Self.server(provider)
            defer { server.stop() }
            let store = InMemoryStore()
            let client = try ProtectedResourceClient(
                configuration: Self.configuration(server, port: provider.redirectPort, clientID: provider.clientID), store: store)
            let browser = try await TestBrowser.signIn(provider)
            let pages = PageBox()
            let response = try await client.send(
                HTTPRequest(url: server.resource, timeout: .seconds(10)), browser: browser.consentingOpener(pages: pages), timeout: .seconds(30))
            #expect(response.status == 200)
            #expect(await client.identity?.clientID == provider.clientID)
            // Only the session is stored: no registration.
            #expect(try await store.listKeys(service: nil).count == 1)
        }

        @Test("an insufficient_scope answer leads to one step-up sign-in for the union of the scopes")
        func stepUpToTheAskedScope() async throws {
            let provider = try Glewlwyd.require()
            let server = try await Self.server(provider, requiredScope: "mcp")
            defer { server.stop() }
            let client = try ProtectedResourceClient(
                configuration: Self.configuration(server, port: try GlewlwydTests.Registration.freePort()), store: InMemoryStore())
            let browser = try await TestBrowser.signIn(provider)
            let pages = PageBox()
            let response = try await client.send(
                HTTPRequest(url: server.resource, timeout: .seconds(10)), browser: browser.consentingOpener(pages: pages), timeout: .seconds(30))
            #expect(response.status == 200)
            #expect(server.answeredStatuses == [401, 403, 200])
            #expect(try await pages.result().status == 200)
            #expect(await client.scopes == ["openid", "mcp"])
            try await Self.unregister(client)
        }

        @Test("a resource that keeps answering insufficient_scope ends in insufficientScope after the configured step-ups")
        func stepUpCap() async throws {
            let provider = try Glewlwyd.require()
            let server = try await Self.server(provider, alwaysInsufficient: true)
            defer { server.stop() }
            let client = try ProtectedResourceClient(
                configuration: Self.configuration(server, port: try GlewlwydTests.Registration.freePort(), maximumStepUps: 1),
                store: InMemoryStore())
            let browser = try await TestBrowser.signIn(provider)
            await #expect(throws: AuthError.insufficientScope(scopes: ["mcp"])) {
                _ = try await client.send(
                    HTTPRequest(url: server.resource, timeout: .seconds(10)), browser: browser.consentingOpener(pages: PageBox()),
                    timeout: .seconds(30))
            }
            #expect(server.answeredStatuses == [401, 403, 403])
            try await Self.unregister(client)
        }

        @Test("with DPoP the resource server accepts the client's proofs and refuses a replayed one")
        func dpopProofsAtTheResource() async throws {
            let provider = try Glewlwyd.require()
            let validator = DPoPProofValidator()
            let server = try await Self.server(provider, dpop: validator)
            defer { server.stop() }
            let client = try ProtectedResourceClient(
                configuration: Self.configuration(server, port: try GlewlwydTests.Registration.freePort(), dpop: true), store: InMemoryStore())
            let browser = try await TestBrowser.signIn(provider)
            let response = try await client.send(
                HTTPRequest(url: server.resource, timeout: .seconds(10)), browser: browser.consentingOpener(pages: PageBox()), timeout: .seconds(30))
            #expect(response.status == 200)
            #expect(validator.acceptedCount == 1)

            let headers = try await client.authorizationHeaders(for: server.resource, method: "GET")
            #expect(headers["Authorization"]?.hasPrefix("DPoP ") == true)
            let first = try await URLSessionTransport().send(HTTPRequest(url: server.resource, headers: headers, timeout: .seconds(10)))
            #expect(first.status == 200)
            let replayed = try await URLSessionTransport().send(HTTPRequest(url: server.resource, headers: headers, timeout: .seconds(10)))
            #expect(replayed.status == 401)
            #expect(try AuthenticationChallenge.parse(replayed).first?.errorDescription == "jti replayed")
            // A proof for another method is refused too.
            let post = try await client.authorizationHeaders(for: server.resource, method: "POST")
            let wrongMethod = try await URLSessionTransport().send(HTTPRequest(url: server.resource, headers: post, timeout: .seconds(10)))
            #expect(wrongMethod.status == 401)
            #expect(try AuthenticationChallenge.parse(wrongMethod).first?.errorDescription == "htm is not GET")
            try await Self.unregister(client)
        }
    }
}
