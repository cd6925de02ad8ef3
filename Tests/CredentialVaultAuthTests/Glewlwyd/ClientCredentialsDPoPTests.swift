import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    /// DPoP (RFC 9449) for service tokens: the client credentials grant against glewlwyd's
    /// "dpop" plugin, where every proof needs the server's nonce.
    @Suite("client credentials with DPoP", .ownThread)
    struct ClientCredentialsDPoP {
        let provider: Glewlwyd
        init() throws { provider = try Glewlwyd.require() }

        func configuration(dpop: Bool) -> OIDCConfiguration {
            var configuration = OIDCConfiguration(
                issuer: provider.dpopIssuer, clientID: provider.serviceClientID,
                clientAuthentication: .clientSecretBasic(secret: provider.serviceSecret))
            configuration.dpop = dpop
            return configuration
        }

        @Test("the service token is DPoP-bound to a key cached with it (cnf.jkt), the nonce challenge answered once, and reused from the cache")
        func serviceTokenIsBound() async throws {
            let transport = CountingTransport()
            let store = InMemoryStore()
            let client = try ClientCredentialsClient(
                configuration: configuration(dpop: true), scopes: ["api"], store: store, transport: transport, logger: .credentialVaultSilent)
            let token = try await client.accessToken()
            #expect((1...2).contains(transport.tokenRequests("client_credentials")), "the token request and at most its nonce retry")
            let cached = try #require(try await SessionStorage(store: store, key: Self.cacheKey(provider), options: .default).load())
            #expect(cached.accessToken == token)
            let key = try DPoPProver.key(stored: try #require(cached.dpopKey))
            let cnf = try #require(try GlewlwydTests.DPoP.claims(token)["cnf"]?.objectValue)
            #expect(cnf["jkt"]?.stringValue == key.thumbprint)
            let requests = transport.tokenRequests("client_credentials")
            #expect(try await client.accessToken() == token)
            #expect(transport.tokenRequests("client_credentials") == requests, "served from the cache")
            let another = try ClientCredentialsClient(
                configuration: configuration(dpop: true), scopes: ["api"], store: store, transport: transport, logger: .credentialVaultSilent)
            #expect(try await another.accessToken() == token, "another process sharing the vault uses the cached token and its key")
            #expect(transport.tokenRequests("client_credentials") == requests)
        }

        @Test("headers for a resource request carry a proof a resource server accepts: htm, htu, ath, and the token's key")
        func headersCarryAValidProof() async throws {
            let client = try ClientCredentialsClient(
                configuration: configuration(dpop: true), scopes: ["api"], store: InMemoryStore(), logger: .credentialVaultSilent)
            // Sent with a query; htu is the URL without it (RFC 9449 section 4.2), as the server compares.
            let url = "http://127.0.0.1:9999/api/items"
            let headers = try await client.authorizationHeaders(for: URL(string: url + "?page=2")!, method: "POST")
            let authorization = try #require(headers["Authorization"])
            #expect(authorization.hasPrefix("DPoP "))
            let token = String(authorization.dropFirst("DPoP ".count))
            let validator = DPoPProofValidator()
            let claims = try GlewlwydTests.DPoP.claims(token)
            #expect(validator.rejection(proof: headers["DPoP"], method: "POST", url: url, accessToken: token, claims: claims) == nil)
            // The same proof again is a replay; a proof for another method is refused.
            #expect(validator.rejection(proof: headers["DPoP"], method: "POST", url: url, accessToken: token, claims: claims) != nil)
            let other = try await client.authorizationHeaders(for: URL(string: url)!, method: "GET")
            #expect(validator.rejection(proof: other["DPoP"], method: "DELETE", url: url, accessToken: token, claims: claims) != nil)
        }

        @Test("a Bearer service token cached before DPoP was turned on is replaced by a bound one, never handed out as bound")
        func cachedBearerTokenIsReplaced() async throws {
            let store = InMemoryStore()
            let bearer = try await ClientCredentialsClient(
                configuration: configuration(dpop: false), scopes: ["api"], store: store, logger: .credentialVaultSilent
            ).accessToken()
            #expect(try GlewlwydTests.DPoP.claims(bearer)["cnf"] == nil)
            let bound = try ClientCredentialsClient(
                configuration: configuration(dpop: true), scopes: ["api"], store: store, logger: .credentialVaultSilent)
            let headers = try await bound.authorizationHeaders(for: URL(string: "https://api.example.com/x")!, method: "GET")
            let token = try #require(headers["Authorization"]).dropFirst("DPoP ".count)
            #expect(token != bearer)
            #expect(try GlewlwydTests.DPoP.claims(String(token))["cnf"] != nil)
        }

        /// Where `ClientCredentialsClient` caches the token of `svc` with scope `api` at the dpop plugin.
        static func cacheKey(_ provider: Glewlwyd) -> CredentialKey {
            CredentialKey(
                service: OIDCConfiguration(issuer: provider.dpopIssuer, clientID: provider.serviceClientID).storageService,
                account: "client-credentials \(provider.serviceClientID)@\(provider.dpopIssuer.absoluteString) [api] dpop")
        }
    }
}
