import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultAuth

extension Glewlwyd {
    /// The resources provision.sh maps to scope `openid` on every plugin.
    static let resourceA = URL(string: "https://api.example.com/")!
    static let resourceB = URL(string: "http://127.0.0.1:9999/mcp")!

    /// The plugin without refresh token rotation (provision.sh's "resources").
    var resourcesIssuer: URL {
        ProcessInfo.processInfo.environment["GLEWLWYD_RESOURCES_ISSUER"].flatMap(URL.init(string:))
            ?? api.appendingPathComponent("resources")
    }

    /// A configuration of `cli` asking for `resources` at sign-in.
    func resourceConfiguration(issuer: URL, resources: [URL] = [Glewlwyd.resourceA, Glewlwyd.resourceB]) -> OIDCConfiguration {
        var configuration = configuration(issuer: issuer)
        configuration.resources = resources
        return configuration
    }
}

extension GlewlwydTests {
    /// Resource indicators (RFC 8707) against glewlwyd's resource mapping.
    @Suite("resource indicators", .ownThread)
    struct ResourceIndicators {
        let provider: Glewlwyd
        init() throws { provider = try Glewlwyd.require() }

        /// The `aud` of a JWT access token (read in the test only: the library never parses access tokens).
        static func audience(_ jwt: String) throws -> String? {
            let payload = try #require(jwt.split(separator: ".").dropFirst().first)
            return try #require(try JSONValue.parse(Base64URL.decode(String(payload))).objectValue)["aud"]?.stringValue
        }

        /// Refresh requests that named `resource`, counted by a transport of the test.
        final class ResourceCounter: HTTPTransport {
            let inner = CountingTransport()
            private let counts = Mutex<[String: Int]>([:])

            func refreshes(for resource: URL) -> Int { counts.withLock { $0[resource.absoluteString] ?? 0 } }

            func send(_ request: HTTPRequest) async throws(AuthError) -> HTTPResponse {
                if let body = request.body {
                    let form = FormEncoding.parameters(of: URL(string: "x:?" + String(decoding: body, as: UTF8.self))!)
                    if form["grant_type"] == "refresh_token", let resource = form["resource"] {
                        counts.withLock { $0[resource, default: 0] += 1 }
                    }
                }
                return try await inner.send(request)
            }
        }

        func client(
            _ configuration: OIDCConfiguration, store: any AsyncTokenStorageAdapter = InMemoryStore(), clock: ManualClock = ManualClock()
        ) async throws -> (OIDCClient, ResourceCounter) {
            let transport = ResourceCounter()
            let client = try await OIDCClient(
                configuration: configuration, store: store, transport: transport, clock: clock, logger: .credentialVaultSilent)
            return (client, transport)
        }

        @Test("sign-in sends both resources; each resource's token has that audience, both stored in the one session, served from it within their lifetime, refreshed with resource= after")
        func tokenPerResource() async throws {
            let clock = ManualClock()
            let (client, transport) = try await client(provider.resourceConfiguration(issuer: provider.resourcesIssuer), clock: clock)
            let request = try await client.beginAuthorization(redirectURI: provider.customRedirectURI)
            let sent = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.filter { $0.name == "resource" }.map(\.value)
            #expect(sent == [Glewlwyd.resourceA.absoluteString, Glewlwyd.resourceB.absoluteString])
            let browser = try await TestBrowser.signIn(provider)
            let session = try await client.handleRedirect(url: try await browser.authorize(request.url))
            #expect(try Self.audience(session.accessToken) == "openid", "the main token names no resource")

            let tokenA = try await client.accessToken(for: Glewlwyd.resourceA)
            let tokenB = try await client.accessToken(for: Glewlwyd.resourceB)
            #expect(try Self.audience(tokenA) == Glewlwyd.resourceA.absoluteString)
            #expect(try Self.audience(tokenB) == Glewlwyd.resourceB.absoluteString)
            let stored = try #require(try await client.sessions.storedSession())
            #expect(Set(stored.resourceTokens.keys) == [Glewlwyd.resourceA.absoluteString, Glewlwyd.resourceB.absoluteString])
            #expect(stored.resourceTokens[Glewlwyd.resourceA.absoluteString]?.accessToken == tokenA)
            #expect(stored.refreshToken == session.refreshToken, "no rotation: the one refresh token is kept")
            // The first resource's refresh was preceded by one of the main token, which showed
            // that the chain does not rotate; the main token is still the main one.
            #expect(stored.refreshChain == RefreshChain(rotates: false))
            #expect(try Self.audience(stored.accessToken) == "openid")
            #expect(transport.refreshes(for: Glewlwyd.resourceA) == 1 && transport.refreshes(for: Glewlwyd.resourceB) == 1)
            #expect(transport.inner.tokenRequests("refresh_token") == 3)

            // Within their lifetime: from the session, no request.
            #expect(try await client.accessToken(for: Glewlwyd.resourceA, minTTL: .seconds(600)) == tokenA)
            #expect(try await client.accessToken(for: Glewlwyd.resourceB) == tokenB)
            #expect(transport.inner.tokenRequests("refresh_token") == 3)

            // Longer than the provider's tokens live (an hour), asked of a token just obtained: no request.
            await #expect(throws: AuthError.tokenLifetimeTooShort(lifetime: .seconds(3600), minTTL: .seconds(3601))) {
                _ = try await client.accessToken(for: Glewlwyd.resourceB, minTTL: .seconds(3601))
            }
            #expect(transport.inner.tokenRequests("refresh_token") == 3)
            // A minTTL longer than what is left: a refresh with resource=B.
            clock.advance(by: .seconds(100))
            let longerB = try await client.accessToken(for: Glewlwyd.resourceB, minTTL: .seconds(3550))
            #expect(longerB != tokenB && transport.refreshes(for: Glewlwyd.resourceB) == 2)
            #expect(try Self.audience(longerB) == Glewlwyd.resourceB.absoluteString)
            // Near A's expiry: a refresh with resource=A, and only A.
            clock.advance(by: .seconds(3490))
            let newA = try await client.accessToken(for: Glewlwyd.resourceA)
            #expect(newA != tokenA)
            #expect(try Self.audience(newA) == Glewlwyd.resourceA.absoluteString)
            #expect(transport.refreshes(for: Glewlwyd.resourceA) == 2 && transport.refreshes(for: Glewlwyd.resourceB) == 2)
            // The main token still works as before.
            #expect(try await GlewlwydTests.userinfoStatus(provider, issuer: provider.resourcesIssuer, token: try await client.getAccessToken()) == 200)
        }

        @Test("two clients sharing a vault (two processes) asking for the same resource at once make one refresh")
        func oneRefreshAcrossProcesses() async throws {
            let vault = try TemporaryVault()
            let configuration = provider.resourceConfiguration(issuer: provider.resourcesIssuer)
            let (first, firstTransport) = try await client(configuration, store: try vault.open())
            _ = try await GlewlwydTests.signIn(first, provider, browser: try await TestBrowser.signIn(provider))
            let (second, secondTransport) = try await client(configuration, store: try vault.open())
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<20 {
                    let client = index.isMultiple(of: 2) ? first : second
                    group.addTask { try await client.accessToken(for: Glewlwyd.resourceA) }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(tokens).count == 1)
            #expect(firstTransport.refreshes(for: Glewlwyd.resourceA) + secondTransport.refreshes(for: Glewlwyd.resourceA) == 1)
        }

        @Test("a resource the provider does not allow is refused with invalidTarget naming it; the session is kept")
        func unknownResource() async throws {
            let (client, _) = try await client(provider.resourceConfiguration(issuer: provider.resourcesIssuer))
            _ = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            let unknown = URL(string: "https://unknown.example.com/")!
            await #expect(throws: AuthError.invalidTarget(resource: unknown.absoluteString)) {
                _ = try await client.accessToken(for: unknown)
            }
            // glewlwyd compares exact strings: without its trailing slash, A is another resource.
            await #expect(throws: AuthError.invalidTarget(resource: "https://api.example.com")) {
                _ = try await client.accessToken(for: URL(string: "https://api.example.com")!)
            }
            #expect(try await client.sessions.storedSession() != nil)
            #expect(try Self.audience(try await client.accessToken(for: Glewlwyd.resourceA)) == Glewlwyd.resourceA.absoluteString)
        }

        @Test("a sign-in asking for a resource the provider does not allow ends with invalidTarget")
        func unknownResourceAtSignIn() async throws {
            let unknown = URL(string: "https://unknown.example.com/")!
            let (client, _) = try await client(provider.resourceConfiguration(issuer: provider.resourcesIssuer, resources: [unknown]))
            await #expect(throws: AuthError.invalidTarget(resource: nil)) {
                _ = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            }
            #expect(try await client.sessions.storedSession() == nil)
        }

        @Test("with rotating refresh tokens, no refresh token is spent on a resource (resourceRefreshWouldNarrow, learned from a main refresh) and the main token keeps its audience")
        func rotatingChainIsNotSpentOnAResource() async throws {
            let (client, transport) = try await client(provider.resourceConfiguration(issuer: provider.issuer))
            let session = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            let mainAudience = try Self.audience(session.accessToken)
            #expect(mainAudience != Glewlwyd.resourceA.absoluteString)
            await #expect(throws: AuthError.resourceRefreshWouldNarrow(resource: Glewlwyd.resourceA.absoluteString)) {
                _ = try await client.accessToken(for: Glewlwyd.resourceA)
            }
            #expect(transport.refreshes(for: Glewlwyd.resourceA) == 0, "the refresh token was not spent on the resource")
            let learned = try #require(try await client.sessions.storedSession())
            #expect(learned.refreshToken != session.refreshToken, "the main refresh that showed the rotation stored its rotated token")
            // glewlwyd would narrow the chain to A here; the main token must stay the main one,
            // since authorizationHeaders(for:) sends it to any URL.
            let main = try await client.getAccessToken(forceRefresh: true)
            #expect(try Self.audience(main) == mainAudience)
            let requests = transport.inner.tokenRequests("refresh_token")
            await #expect(throws: AuthError.resourceRefreshWouldNarrow(resource: Glewlwyd.resourceB.absoluteString)) {
                _ = try await client.accessToken(for: Glewlwyd.resourceB)
            }
            #expect(transport.inner.tokenRequests("refresh_token") == requests, "known to rotate: refused without a request")
        }

        @Test("a DPoP session's resource tokens are bound to its key and sent with a proof")
        func dpopBoundResourceToken() async throws {
            // The plugin without rotation: a rotating chain is never spent on a resource.
            var configuration = provider.resourceConfiguration(issuer: provider.resourcesIssuer)
            configuration.dpop = true
            let (client, _) = try await client(configuration)
            let session = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            let target = URL(string: "http://127.0.0.1:9999/mcp/tools")!
            let headers = try await client.authorizationHeaders(for: target, method: "POST", resource: Glewlwyd.resourceA)
            let token = try #require(headers["Authorization"]?.split(separator: " ").last.map(String.init))
            #expect(headers["Authorization"]?.hasPrefix("DPoP ") == true)
            #expect(try Self.audience(token) == Glewlwyd.resourceA.absoluteString)
            let key = try DPoPProver.key(stored: try #require(session.dpopKey))
            let cnf = try #require(try GlewlwydTests.DPoP.claims(token)["cnf"]?.objectValue)
            #expect(cnf["jkt"]?.stringValue == key.thumbprint)
        }

        @Test("client credentials: a token per resource with that audience, cached apart from the one without resource; an unknown resource is invalidTarget")
        func clientCredentialsPerResource() async throws {
            let transport = CountingTransport()
            let configuration = OIDCConfiguration(
                issuer: provider.issuer, clientID: provider.serviceClientID,
                clientAuthentication: .clientSecretBasic(secret: provider.serviceSecret))
            let client = try ClientCredentialsClient(
                configuration: configuration, scopes: ["api"], store: InMemoryStore(), transport: transport, logger: .credentialVaultSilent)
            let plain = try await client.accessToken()
            let forA = try await client.accessToken(resource: Glewlwyd.resourceA)
            #expect(try Self.audience(plain) == "api")
            #expect(try Self.audience(forA) == Glewlwyd.resourceA.absoluteString)
            #expect(try await client.accessToken(resource: Glewlwyd.resourceA) == forA)
            #expect(try await client.accessToken() == plain)
            #expect(transport.tokenRequests("client_credentials") == 2)
            await #expect(throws: AuthError.invalidTarget(resource: Glewlwyd.resourceB.absoluteString)) {
                _ = try await client.accessToken(resource: Glewlwyd.resourceB)
            }
        }

        @Test("device grant: the resource asked for at the device authorization request is served; one not asked for is invalidTarget")
        func deviceGrantResources() async throws {
            let (client, _) = try await client(provider.resourceConfiguration(issuer: provider.resourcesIssuer, resources: [Glewlwyd.resourceA]))
            let browser = try await TestBrowser.signIn(provider)
            let issuer = provider.resourcesIssuer
            _ = try await client.signInWithDevice { authorization in
                Task { try? await browser.approveDevice(userCode: authorization.userCode, issuer: issuer) }
            }
            #expect(try Self.audience(try await client.accessToken(for: Glewlwyd.resourceA)) == Glewlwyd.resourceA.absoluteString)
            await #expect(throws: AuthError.invalidTarget(resource: Glewlwyd.resourceB.absoluteString)) {
                _ = try await client.accessToken(for: Glewlwyd.resourceB)
            }
        }
    }
}
