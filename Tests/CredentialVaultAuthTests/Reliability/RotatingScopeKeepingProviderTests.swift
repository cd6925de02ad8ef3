import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultAuth

/// A provider that rotates refresh tokens and keeps a rotated one's scope, as RFC 6749 section 6
/// requires (rotation is what RFC 9700 section 4.14 asks of public clients without sender-
/// constrained tokens): resource tokens (RFC 8707) were served from it before the chain rules.
@Suite("resource tokens from a rotating provider that keeps the refresh token's scope", .ownThread)
struct RotatingScopeKeepingProviderTests {
    @Test("a provider declared to keep a rotated refresh token's resources serves every resource and the main token from its rotating chain")
    func rotatingProviderServesAResourceToken() async throws {
        let stub = try RefreshChainNarrowingTests.stub(mainRotates: true)
        var configuration = StubOIDC.configuration(stub)
        configuration.rotatedRefreshTokensKeepResources = true  // declared: without it, refused (RefreshChainNarrowingTests)
        let client = try await OIDCClient(configuration: configuration, store: InMemoryStore(), logger: .credentialVaultSilent)
        try await StubOIDC.signIn(client)
        let token = try await client.accessToken(for: RefreshChainNarrowingTests.a)
        #expect(token.hasPrefix("for \(RefreshChainNarrowingTests.a.absoluteString)"))
        let refreshes = RefreshChainNarrowingTests.refreshes(stub)
        #expect(refreshes.count == 1 && refreshes.first?.form["resource"] == RefreshChainNarrowingTests.a.absoluteString, "no learning refresh first")
        // The rotated token keeps its resources: the main token still refreshes, B is served too.
        #expect(try await client.getAccessToken(forceRefresh: true).hasPrefix("main"))
        #expect(try await client.accessToken(for: RefreshChainNarrowingTests.b).hasPrefix("for \(RefreshChainNarrowingTests.b.absoluteString)"))
    }
}
