import Logging
import CredentialVault
import CredentialVaultTesting
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    @Suite("session API for apps", .ownThread)
    struct SessionAPI {
        @Test("credentials(minTTL:) refreshes when less is left and refuses beyond the provider's lifetime; hasUsableSession follows")
        func credentialsAndUsableSession() async throws {
            let provider = try Glewlwyd.require()
            let (client, transport, clock) = try await GlewlwydTests.countedClient(provider)
            #expect(client.state == .unauthenticated(.neverSignedIn))
            #expect(!client.hasUsableSession)
            let first = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            #expect(client.hasUsableSession)
            #expect(client.state == .authenticated(SessionSummary(first)))

            clock.advance(by: .seconds(3000))  // 600 s left of the hour: not yet within the 60 s margin
            #expect(try await client.credentials(minTTL: .seconds(300)).accessToken == first.accessToken)
            #expect(transport.tokenRequests("refresh_token") == 0)
            let longer = try await client.credentials(minTTL: .seconds(900))
            #expect(longer.accessToken != first.accessToken)
            #expect(transport.tokenRequests("refresh_token") == 1)
            #expect(try await GlewlwydTests.userinfoStatus(provider, token: longer.accessToken) == 200)

            do {
                _ = try await client.credentials(minTTL: .seconds(7200))
                Issue.record("a two-hour token from a provider issuing one-hour tokens")
            } catch .tokenLifetimeTooShort(let lifetime, _) {
                #expect(lifetime == .seconds(3600))
            }
            #expect(transport.tokenRequests("refresh_token") == 1, "the token just obtained is fresh: no request")

            try await client.signOut()
            #expect(!client.hasUsableSession)
            #expect(client.state == .unauthenticated(.signedOut))
        }

        @Test("a client on a locked vault says storeLocked; after the unlock, reload() finds the session and it refreshes")
        func lockedThenUnlocked() async throws {
            let provider = try Glewlwyd.require()
            let vault = try TemporaryVault()
            let signedIn = try await OIDCClient(configuration: provider.configuration(), store: try vault.open(), logger: .credentialVaultSilent)
            let session = try await GlewlwydTests.signIn(signedIn, provider, browser: try await TestBrowser.signIn(provider))

            let keyring = FaultInjectingStore(wrapping: try vault.open())
            keyring.inject(.fail(.locked), into: .load)
            let client = try await OIDCClient(configuration: provider.configuration(), store: keyring, logger: .credentialVaultSilent)
            #expect(client.state == .unauthenticated(.storeLocked))
            #expect(!client.hasUsableSession)
            await #expect(throws: AuthError.storage(.locked)) { _ = try await client.getAccessToken(forceRefresh: true) }
            #expect(client.state == .unauthenticated(.storeLocked))

            keyring.clear()
            #expect(await client.reload() == .authenticated(SessionSummary(session)))
            let token = try await client.getAccessToken(forceRefresh: true)
            #expect(try await GlewlwydTests.userinfoStatus(provider, token: token) == 200)
        }
    }
}
