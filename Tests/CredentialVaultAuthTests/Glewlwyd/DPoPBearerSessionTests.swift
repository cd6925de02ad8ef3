import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests.DPoP {
    @Test("with DPoP configured, a stored Bearer session is neither sent to a resource nor refreshed into new Bearer tokens")
    func bearerSessionRefusedWhenDPoPConfigured() async throws {
        let store = InMemoryStore()
        // Signed in at the same issuer by a client without DPoP (or before DPoP was turned on).
        let plain = try await OIDCClient(
            configuration: provider.configuration(issuer: provider.dpopIssuer), store: store, logger: .credentialVaultSilent)
        let bearer = try await GlewlwydTests.signIn(plain, provider, browser: try await TestBrowser.signIn(provider))
        #expect(!bearer.isDPoPBound)
        #expect(bearer.refreshToken != nil)
        let (client, transport) = try await client(store)
        await #expect(throws: OIDCRefresher.notDPoPBound) { _ = try await client.authorizationHeaders(for: userinfoURL(), method: "GET") }
        await #expect(throws: OIDCRefresher.notDPoPBound) {
            _ = try await client.send(authorized: HTTPRequest(url: userinfoURL(), timeout: .seconds(10)))
        }
        await #expect(throws: OIDCRefresher.notDPoPBound) { _ = try await client.getAccessToken(forceRefresh: true) }
        #expect(transport.requests(pathSuffix: "/userinfo") == 0)
        #expect(transport.tokenRequests("refresh_token") == 0)
    }
}
