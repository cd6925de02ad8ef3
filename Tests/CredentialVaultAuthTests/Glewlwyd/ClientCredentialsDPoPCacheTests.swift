import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    /// The service token's cache under DPoP: a cached record whose key cannot be used.
    @Suite("client credentials with DPoP: unusable cached key", .ownThread)
    struct ClientCredentialsDPoPCache {
        let provider: Glewlwyd
        init() throws { provider = try Glewlwyd.require() }

        @Test("a cached service token whose DPoP key is unreadable is replaced by a new token, not an error until it expires")
        func unreadableCachedKeyIsReplaced() async throws {
            var configuration = OIDCConfiguration(
                issuer: provider.dpopIssuer, clientID: provider.serviceClientID,
                clientAuthentication: .clientSecretBasic(secret: provider.serviceSecret))
            configuration.dpop = true
            let store = InMemoryStore()
            let storage = SessionStorage(store: store, key: ClientCredentialsDPoP.cacheKey(provider), options: .default)
            let now = Date()
            var broken = AuthSession(accessToken: "cached-token", expiresAt: now.addingTimeInterval(3600), scope: "api", obtainedAt: now)
            broken.dpopKey = "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n"
            try await storage.save(broken)
            let client = try ClientCredentialsClient(
                configuration: configuration, scopes: ["api"], store: store, logger: .credentialVaultSilent)
            // Today: `.storage(.corrupted("... sign in again"))` on every call for the hour the
            // cached token lives; a service has no sign-in, and the cache is never replaced.
            let headers = try await client.authorizationHeaders(for: URL(string: "https://api.example.com/x")!, method: "GET")
            #expect(headers["Authorization"]?.hasPrefix("DPoP ") == true)
            #expect(headers["Authorization"] != "DPoP cached-token")
        }

        @Test("a DPoP service client and a Bearer one of the same client and scopes sharing a vault keep their tokens apart instead of replacing each other's on every call")
        func boundAndBearerClientsDoNotReplaceEachOther() async throws {
            var bound = OIDCConfiguration(
                issuer: provider.dpopIssuer, clientID: provider.serviceClientID,
                clientAuthentication: .clientSecretBasic(secret: provider.serviceSecret))
            var bearer = bound
            bound.dpop = true
            bearer.dpop = false
            let transport = CountingTransport()
            let store = InMemoryStore()
            let boundClient = try ClientCredentialsClient(
                configuration: bound, scopes: ["api"], store: store, minimumRefreshInterval: .milliseconds(10), transport: transport,
                logger: .credentialVaultSilent)
            let bearerClient = try ClientCredentialsClient(
                configuration: bearer, scopes: ["api"], store: store, minimumRefreshInterval: .milliseconds(10), transport: transport,
                logger: .credentialVaultSilent)
            let url = URL(string: "https://api.example.com/x")!
            _ = try await boundClient.authorizationHeaders(for: url, method: "GET")
            _ = try await bearerClient.authorizationHeaders(for: url, method: "GET")
            let warm = transport.tokenRequests("client_credentials")
            for _ in 0..<3 {
                _ = try await boundClient.authorizationHeaders(for: url, method: "GET")
                _ = try await bearerClient.authorizationHeaders(for: url, method: "GET")
            }
            // Today both are cached under one key: each call finds the other kind and fetches anew.
            #expect(transport.tokenRequests("client_credentials") == warm, "both tokens are served from the vault once fetched")
        }
    }
}
