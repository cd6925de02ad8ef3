import Logging
import CredentialVault
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    @Suite("sign-out and revocation", .ownThread)
    struct SignOut {
        @Test("sign-out deletes the session, revokes the refresh and access tokens, and offers the end-session URL")
        func revocation() async throws {
            let provider = try Glewlwyd.require()
            let store = InMemoryStore()
            let client = try await OIDCClient(configuration: provider.configuration(), store: store, logger: .credentialVaultSilent)
            let session = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            #expect(try await GlewlwydTests.userinfoStatus(provider, token: session.accessToken) == 200)
            let result = try await client.signOut(postLogoutRedirectURI: "org.credentialvault.test:/signed-out")
            #expect(result.hadSession)
            #expect(result.revoked)
            #expect(result.revocationError == nil)
            let endSession = try #require(result.endSessionURL)
            #expect(endSession.path.hasSuffix("/end_session"))
            #expect(FormEncoding.parameters(of: endSession)["id_token_hint"] == session.idToken)
            #expect(try await client.sessions.storedSession() == nil)
            await #expect(try store.listKeys().isEmpty)
            // At the provider: the refresh token is dead, the access token is rejected.
            #expect(try await GlewlwydTests.refreshStatus(provider, refreshToken: session.refreshToken!) == 400)
            #expect(try await GlewlwydTests.userinfoStatus(provider, token: session.accessToken) == 401)
            // Signing out again is harmless.
            let again = try await client.signOut()
            #expect(!again.hadSession && !again.revoked)
        }
    }

    @Suite("key rotation at the provider", .ownThread)
    struct KeyRotation {
        @Test("a new signing key (new kid) at the provider: the JWKS is refetched once and the ID token verifies")
        func rotation() async throws {
            let provider = try Glewlwyd.require()
            let client = try await OIDCClient(configuration: provider.configuration(), store: InMemoryStore(), logger: .credentialVaultSilent)
            let browser = try await TestBrowser.signIn(provider)
            let admin = try await GlewlwydAdmin.signIn(provider)
            let before = try await GlewlwydTests.signIn(client, provider, browser: browser)
            let firstKey = try await client.verifyIDToken(before.idToken!, nonce: nil)
            #expect(await client.provider.keySets.fetchCount == 1)

            let originalPlugin = try await admin.rotateSigningKey(to: "rs2")
            do {
                try await checkRotated(client, provider, browser, firstKey)
            } catch {
                try? await admin.restorePlugin(originalPlugin)
                throw error
            }
            try await admin.restorePlugin(originalPlugin)
        }

        private func checkRotated(
            _ client: OIDCClient, _ provider: Glewlwyd, _ browser: TestBrowser, _ firstKey: VerifiedIDToken
        ) async throws {
            let after = try await GlewlwydTests.signIn(client, provider, browser: browser)
            let secondKey = try await client.verifyIDToken(after.idToken!, nonce: nil)
            #expect(firstKey.keyID != "rs2")
            #expect(secondKey.keyID == "rs2")
            #expect(secondKey.algorithm == .rs256)
            #expect(await client.provider.keySets.fetchCount == 2)  // exactly one refetch
            // A token naming a kid that is nowhere is refused; within the cooldown of the
            // rotation's refetch it causes no fetch at all.
            let bogus = try #require(GlewlwydAdmin.replacingKeyID(in: after.idToken!, with: "no-such-key"))
            await expectThrows({ (error: AuthError) in if case .invalidIDToken = error { true } else { false } }) {
                _ = try await client.verifyIDToken(bogus, nonce: nil)
            }
            #expect(await client.provider.keySets.fetchCount == 2)
        }
    }
}
