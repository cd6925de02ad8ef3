import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests.ResourceIndicators {
    @Test("with rotating refresh tokens, a sign-in in another process while a resource's token learns the chain's rotation keeps the new session's refresh token unspent and its main token refreshable")
    func signInDuringLearningKeepsTheNewChain() async throws {
        let vault = try TemporaryVault()
        let gated = GatedStore(try vault.open())
        let configuration = provider.resourceConfiguration(issuer: provider.issuer)
        let (first, firstTransport) = try await client(configuration, store: gated)
        _ = try await GlewlwydTests.signIn(first, provider, browser: try await TestBrowser.signIn(provider))
        let (second, _) = try await client(configuration, store: try vault.open())
        // The first process read its session (rotation unknown) and waits for the lock of the
        // main refresh that is to learn it; the user signs in again in the second process.
        let gate = gated.hold(.exclusiveAccess, times: 1)
        let asking = Task { try await first.accessToken(for: Glewlwyd.resourceA) }
        #expect(await gated.held.reached(1))
        let session = try await GlewlwydTests.signIn(second, provider, browser: try await TestBrowser.signIn(provider))
        let mainAudience = try Self.audience(session.accessToken)
        gate.open()
        _ = await asking.result
        #expect(firstTransport.refreshes(for: Glewlwyd.resourceA) == 0, "the new sign-in's rotating refresh token was spent on A")
        // glewlwyd narrowed the new chain to A if it was spent there: the main token must still refresh, with its audience.
        let main = try await second.getAccessToken(forceRefresh: true)
        #expect(try Self.audience(main) == mainAudience)
    }
}
