import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultAuth

/// What the session's state says once its refresh token was narrowed to one resource
/// (`refreshTokenNarrowed`): the main token can no longer be refreshed, so an expired one
/// leaves the user signed out in all but name until they sign in again.
@Suite("state of a narrowed refresh chain", .ownThread)
struct NarrowedChainStateTests {
    @Test("once the main token expired and its refresh was refused as narrowed, the state is no longer authenticated")
    func expiredMainTokenOfANarrowedChainIsNotAuthenticated() async throws {
        let stub = try RefreshChainNarrowingTests.stub(mainRotates: false)
        let clock = ManualClock()
        let client = try await StubOIDC.client(stub, clock: clock)
        try await StubOIDC.signIn(client)
        // The main refresh learns the chain does not rotate; A's refresh then rotates it: narrowed to A.
        _ = try await client.accessToken(for: RefreshChainNarrowingTests.a)
        clock.advance(by: .seconds(7200))  // the main token (an hour) expired
        await #expect(throws: AuthError.refreshTokenNarrowed(resource: RefreshChainNarrowingTests.a.absoluteString)) {
            _ = try await client.getAccessToken()
        }
        if case .authenticated(let summary) = client.sessions.state {
            Issue.record("still published as authenticated (\(summary)) with an expired main token that can never be refreshed")
        }
    }
}
