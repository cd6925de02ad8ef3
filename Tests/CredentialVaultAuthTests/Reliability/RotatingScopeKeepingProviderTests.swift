import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultAuth

/// A provider that rotates refresh tokens and keeps a rotated one's scope, as RFC 6749 section 6
/// requires (rotation is what RFC 9700 section 4.14 asks of public clients without sender-
/// constrained tokens): resource tokens (RFC 8707) were served from it before the chain rules.
@Suite("resource tokens from a rotating provider that keeps the refresh token's scope", .ownThread)
struct RotatingScopeKeepingProviderTests {
    @Test("a provider that rotates refresh tokens without narrowing them serves a resource's token")
    func rotatingProviderServesAResourceToken() async throws {
        let stub = try RefreshChainNarrowingTests.stub(mainRotates: true)
        let client = try await StubOIDC.client(stub)
        try await StubOIDC.signIn(client)
        let token = try await client.accessToken(for: RefreshChainNarrowingTests.a)
        #expect(token.hasPrefix("for \(RefreshChainNarrowingTests.a.absoluteString)"))
    }
}
