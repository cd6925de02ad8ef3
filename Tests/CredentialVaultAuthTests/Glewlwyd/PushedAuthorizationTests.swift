import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    /// Pushed authorization requests (RFC 9126) against glewlwyd: the "par" plugin requires them
    /// (and DPoP nonces), "oidc" allows them, "parshort" gives request_uris 2 s of life.
    @Suite("pushed authorization requests (PAR)", .ownThread)
    struct PAR {
        let provider: Glewlwyd
        init() throws { provider = try Glewlwyd.require() }

        /// A client of `cli` at `issuer`, recording its requests.
        func client(
            issuer: URL, par: PushedAuthorization = .automatic, dpop: Bool = false,
            store: any AsyncTokenStorageAdapter = InMemoryStore(), edit: (inout OIDCConfiguration) -> Void = { _ in }
        ) async throws -> (OIDCClient, RecordingTransport) {
            var configuration = provider.configuration(issuer: issuer)
            configuration.pushedAuthorization = par
            configuration.dpop = dpop
            edit(&configuration)
            let transport = RecordingTransport()
            return (try await OIDCClient(configuration: configuration, store: store, transport: transport, logger: .credentialVaultSilent), transport)
        }

        /// The query parameter names of an authorization URL.
        static func queryNames(_ url: URL) -> Set<String> {
            Set(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.map(\.name) ?? [])
        }

        @Test("discovery of the PAR-required plugin: the endpoint and the requirement are read")
        func discovery() async throws {
            let (client, _) = try await client(issuer: provider.parIssuer)
            let metadata = try await client.metadata()
            #expect(metadata.pushedAuthorizationRequestEndpoint == provider.parIssuer.appendingPathComponent("par"))
            #expect(metadata.requirePushedAuthorizationRequests == true)
            let (plain, _) = try await self.client(issuer: provider.issuer)
            #expect(try await plain.metadata().requirePushedAuthorizationRequests == false)
        }

        @Test("PAR required: the sign-in is pushed automatically, the URL carries client_id and request_uri only, a token follows")
        func publicClientSignIn() async throws {
            let store = InMemoryStore()
            let (client, transport) = try await client(issuer: provider.parIssuer, store: store)
            let request = try await client.beginAuthorization(redirectURI: provider.customRedirectURI, additionalParameters: ["login_hint": "alice"])
            #expect(Self.queryNames(request.url) == ["client_id", "request_uri"])
            let parameters = FormEncoding.parameters(of: request.url)
            #expect(parameters["request_uri"]?.hasPrefix("urn:ietf:params:oauth:request_uri:") == true)
            let expiry = try #require(request.requestURIExpiresAt)
            #expect(expiry <= Date().addingTimeInterval(90) && expiry > Date())
            // Everything else went in the pushed body, client_id once (a public client).
            let push = try #require(transport.requests(pathSuffix: "/par").first)
            #expect(push.method == "POST")
            #expect(push.headers["DPoP"] == nil && push.headers["Authorization"] == nil)
            let pairs = RecordingTransport.formPairs(push)
            #expect(pairs.filter { $0.0 == "client_id" }.map(\.1) == [provider.clientID])
            let form = RecordingTransport.form(push)
            #expect(form["state"] == request.state)
            #expect(form["code_challenge_method"] == "S256" && form["code_challenge"]?.count == 43)
            #expect(form["redirect_uri"] == provider.customRedirectURI && form["scope"] == "openid" && form["nonce"] != nil)
            #expect(form["login_hint"] == "alice" && form["response_type"] == "code")
            let browser = try await TestBrowser.signIn(provider)
            let session = try await client.handleRedirect(url: try await browser.authorize(request.url))
            #expect(session.user?.email == "alice@example.com")
            #expect(try await GlewlwydTests.userinfoStatus(provider, issuer: provider.parIssuer, token: session.accessToken) == 200)
            await #expect(try store.listKeys(service: client.configuration.storageService + ".pending").isEmpty)
        }

        @Test("PAR through the loopback listener: signIn pushes, the browser completes the sign-in")
        func loopbackSignIn() async throws {
            let (client, transport) = try await client(issuer: provider.parIssuer)
            let browser = try await TestBrowser.signIn(provider)
            let pages = PageBox()
            let session = try await client.signIn(
                browser: browser.opener(pages: pages), redirect: LoopbackRedirect(port: .fixed(provider.redirectPort)), timeout: .seconds(30))
            #expect(session.user?.email == "alice@example.com")
            #expect(try await pages.result().status == 200)
            #expect(transport.requests(pathSuffix: "/par").count == 1)
        }

        @Test("PAR with DPoP: dpop_jkt in the pushed body (no proof at /par), the code and the tokens are bound to the key")
        func dpopBound() async throws {
            let (client, transport) = try await client(issuer: provider.parIssuer, dpop: true)
            let session = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            #expect(session.isDPoPBound)
            let key = try DPoPProver.key(stored: try #require(session.dpopKey))
            let push = try #require(transport.requests(pathSuffix: "/par").first)
            #expect(RecordingTransport.form(push)["dpop_jkt"] == key.thumbprint)
            #expect(push.headers["DPoP"] == nil)
            #expect(try DPoP.claims(session.accessToken)["cnf"]?.objectValue?["jkt"]?.stringValue == key.thumbprint)
            let userinfo = HTTPRequest(url: provider.parIssuer.appendingPathComponent("userinfo"), timeout: .seconds(10))
            #expect(try await client.send(authorized: userinfo).status == 200)
            #expect(try await GlewlwydTests.userinfoStatus(provider, issuer: provider.parIssuer, token: session.accessToken) == 401)
        }

        /// The `pk-code` client (private_key_jwt) at the "par" plugin, with its consent given.
        func confidentialClient(key: JWSSigningKey) async throws -> (OIDCClient, RecordingTransport, TestBrowser) {
            let (client, transport) = try await client(issuer: provider.parIssuer) { configuration in
                configuration.clientID = "pk-code"
                configuration.clientAuthentication = .privateKeyJWT(key: key)
            }
            let browser = try await TestBrowser.signIn(provider)
            let consent = try await browser.request(
                "PUT", provider.api.appendingPathComponent("auth/grant/pk-code"), body: Data(#"{"scope":"openid"}"#.utf8), json: true)
            #expect(consent.status == 200)
            return (client, transport, browser)
        }

        @Test("a confidential client (private_key_jwt) authenticates at /par with an assertion for the PAR endpoint")
        func confidentialClientSignIn() async throws {
            let key = try ClientAssertions.key(provider, "client-es256.pem", keyID: "pk-code")
            let (client, transport, browser) = try await confidentialClient(key: key)
            let session = try await GlewlwydTests.signIn(client, provider, browser: browser)
            #expect(session.user?.email == "alice@example.com")
            let push = try #require(transport.requests(pathSuffix: "/par").first)
            let form = RecordingTransport.form(push)
            #expect(form["client_assertion_type"] == ClientAssertion.type)
            let assertion = try DPoP.claims(try #require(form["client_assertion"]))
            #expect(assertion["aud"]?.stringValue == provider.parIssuer.appendingPathComponent("par").absoluteString)
            #expect(RecordingTransport.formPairs(push).filter { $0.0 == "client_id" }.count == 1)
        }

        @Test("an assertion by a key the provider does not know is refused at /par: invalidCredentials, nothing pending")
        func confidentialClientRefused() async throws {
            let store = InMemoryStore()
            let unknownKey = try JWSSigningKey.generate(.es256, keyID: "pk-code")
            let (client, _) = try await client(issuer: provider.parIssuer, store: store) { configuration in
                configuration.clientID = "pk-code"
                configuration.clientAuthentication = .privateKeyJWT(key: unknownKey)
            }
            await #expect(throws: AuthError.invalidCredentials) {
                try await client.beginAuthorization(redirectURI: provider.customRedirectURI)
            }
            await #expect(try store.listKeys(service: client.configuration.storageService + ".pending").isEmpty)
        }

        @Test("a request glewlwyd refuses at /par (unregistered redirect URI) is the typed bare-refusal error")
        func bareRefusal() async throws {
            let (client, _) = try await client(issuer: provider.parIssuer)
            await #expect(throws: AuthError.pushedAuthorizationRefused(status: 403)) {
                try await client.beginAuthorization(redirectURI: "http://127.0.0.1:1/not-registered")
            }
        }

        @Test(".never against the PAR-required plugin: pushedAuthorizationRequired, nothing sent, and the plain request would be refused")
        func neverAgainstRequired() async throws {
            let (client, transport) = try await client(issuer: provider.parIssuer, par: .never)
            await #expect(throws: AuthError.pushedAuthorizationRequired) {
                try await client.beginAuthorization(redirectURI: provider.customRedirectURI)
            }
            #expect(transport.requests(pathSuffix: "/par").isEmpty)
            // What the error saves the user from: glewlwyd refuses a plain request there (bare 403).
            let (plain, _) = try await self.client(issuer: provider.issuer)
            let request = try await plain.beginAuthorization(redirectURI: provider.customRedirectURI)
            let query = try #require(URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.percentEncodedQuery)
            let browser = try await TestBrowser.signIn(provider)
            let refused = try await browser.request("GET", URL(string: provider.parIssuer.appendingPathComponent("auth").absoluteString + "?" + query + "&g_continue")!)
            #expect(refused.status == 403)
        }

        @Test(".always pushes at a provider that allows PAR without requiring it; .automatic does not")
        func alwaysWhereAllowed() async throws {
            let (client, transport) = try await client(issuer: provider.issuer, par: .always)
            let session = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            #expect(session.user?.email == "alice@example.com")
            #expect(transport.requests(pathSuffix: "/par").count == 1)
            let (automatic, automaticTransport) = try await self.client(issuer: provider.issuer)
            let request = try await automatic.beginAuthorization(redirectURI: provider.customRedirectURI)
            #expect(request.requestURIExpiresAt == nil && FormEncoding.parameters(of: request.url)["code_challenge"] != nil)
            #expect(automaticTransport.requests(pathSuffix: "/par").isEmpty)
        }

        @Test("a start page never opened ends the wait when the request_uri expires, long before the timeout")
        func neverOpened() async throws {
            let (client, _) = try await client(issuer: provider.parShortIssuer, par: .always)
            try await withCeiling(.seconds(120), "the unopened PAR sign-in") {
                await #expect(throws: AuthError.authorizationExpired) {
                    try await client.signIn(
                        browser: ClosureBrowserOpener { _ in }, redirect: LoopbackRedirect(port: .fixed(provider.redirectPort)), timeout: .seconds(3600))
                }
            }
        }

        @Test("glewlwyd refuses an expired request_uri at its first visit (what the client's own expiry check prevents)")
        func providerRefusesExpired() async throws {
            let (client, _) = try await client(issuer: provider.parShortIssuer, par: .always)
            let request = try await client.beginAuthorization(redirectURI: provider.customRedirectURI)
            let expiry = try #require(request.requestURIExpiresAt)
            #expect(expiry <= Date().addingTimeInterval(2))
            try await Task.sleep(for: .seconds(3))
            let browser = try await TestBrowser.signIn(provider)
            let response = try await browser.request("GET", URL(string: request.url.absoluteString + "&g_continue")!)
            #expect(response.status == 403)
        }
    }
}
