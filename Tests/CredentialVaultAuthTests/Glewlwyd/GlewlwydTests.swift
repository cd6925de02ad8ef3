import Logging
import CredentialVault
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

/// End-to-end tests against the real glewlwyd started by `scripts/services/glewlwyd.sh`.
/// Serialized: they share one provider, one user, one fixed loopback port and its log.
@Suite("glewlwyd end to end", .ownThread, .serialized, .glewlwyd)
enum GlewlwydTests {
    /// Signs in through the custom-scheme redirect: the test browser authorizes and the
    /// redirect URL is handed to `handleRedirect(url:)` as an app would.
    static func signIn(_ client: OIDCClient, _ provider: Glewlwyd, browser: TestBrowser) async throws -> AuthSession {
        let request = try await client.beginAuthorization(redirectURI: provider.customRedirectURI)
        let redirect = try await browser.authorize(request.url)
        return try await client.handleRedirect(url: redirect)
    }

    /// A client of the `cli` client on an in-memory store, on a manual clock, counting its token requests.
    static func countedClient(_ provider: Glewlwyd) async throws -> (client: OIDCClient, transport: CountingTransport, clock: ManualClock) {
        let transport = CountingTransport()
        let clock = ManualClock()
        let client = try await OIDCClient(
            configuration: provider.configuration(), store: InMemoryStore(), transport: transport, clock: clock, logger: .credentialVaultSilent)
        return (client, transport, clock)
    }

    /// GET userinfo with a bearer token; the status tells whether the provider accepts it.
    static func userinfoStatus(_ provider: Glewlwyd, issuer: URL? = nil, token: String) async throws -> Int {
        let response = try await URLSessionTransport().send(HTTPRequest(
            url: (issuer ?? provider.issuer).appendingPathComponent("userinfo"),
            headers: ["Authorization": "Bearer \(token)"], timeout: .seconds(10)))
        return response.status
    }

    /// A refresh request made directly (outside the client), to probe whether a refresh token is alive.
    static func refreshStatus(_ provider: Glewlwyd, refreshToken: String) async throws -> Int {
        let body = FormEncoding.body([("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", provider.clientID)])
        let response = try await URLSessionTransport().send(HTTPRequest(
            method: "POST", url: provider.issuer.appendingPathComponent("token"),
            headers: ["Content-Type": "application/x-www-form-urlencoded"], body: body, timeout: .seconds(10)))
        return response.status
    }

    static func isProviderRejection(_ error: AuthError) -> Bool {
        switch error {
        case .providerError, .invalidGrant: true
        default: false
        }
    }
}
