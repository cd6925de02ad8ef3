import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultAuth

/// The chain rules (`ResourceChainRules`) under interleavings with another process sharing the
/// session: a refresh token whose rotation is not known must not be spent on a resource, even
/// when the session the rules learned about was replaced meanwhile. Two clients over one vault
/// file (two processes); the first one's store calls are held at a gate to order the steps.
@Suite("refresh chain races", .ownThread)
struct RefreshChainRaceTests {
    static let a = URL(string: "https://api.example.com/")!

    /// A provider that rotates every refresh token, and narrows one rotated under `resource=`
    /// (as glewlwyd 2.7.5 does). Each code exchange issues a new session.
    static func rotatingStub() throws -> StubProvider {
        let counter = RefreshChainNarrowingTests.Counter()
        return try StubProvider { request in
            let form = request.form
            let n = counter.next()
            switch form["grant_type"] {
            case "authorization_code": return StubOIDC.tokens(access: "signin\(n)", refresh: "rt-signin-\(n)")
            case "refresh_token":
                if let resource = form["resource"] {
                    return StubOIDC.tokens(access: "for \(resource) \(n)", refresh: "rt-narrowed-\(n)", expiresIn: "60")
                }
                return StubOIDC.tokens(access: "main\(n)", refresh: "rt\(n)")
            default: return .notFound
            }
        }
    }

    @Test("a sign-in in another process while a resource's token waits to learn the chain's rotation does not spend the new refresh token on the resource")
    func signInDuringLearningDoesNotSpendTheNewChainOnAResource() async throws {
        let stub = try Self.rotatingStub()
        let vault = try TemporaryVault()
        let gated = GatedStore(try vault.open())
        let first = try await StubOIDC.client(stub, store: gated)
        try await StubOIDC.signIn(first)
        let second = try await StubOIDC.client(stub, store: try vault.open())
        // The first process reads its session (chain not learned yet), then waits for the lock
        // of the refresh that is to learn whether the chain rotates.
        let gate = gated.hold(.exclusiveAccess, times: 1)
        let asking = Task { try await first.accessToken(for: Self.a) }
        #expect(await gated.held.reached(1))
        // Meanwhile the user signs in again in the second process: a new chain, not learned.
        try await StubOIDC.signIn(second)
        gate.open()
        let outcome = await asking.result
        let resourceRefreshes = RefreshChainNarrowingTests.refreshes(stub).filter { $0.form["resource"] != nil }
        #expect(
            resourceRefreshes.isEmpty,
            "the rotating refresh token of the new sign-in was spent on \(Self.a) (outcome: \(String(describing: try? outcome.get())))")
        // The new sign-in's main token still refreshes: its chain was not narrowed to A.
        await #expect(throws: Never.self) { _ = try await second.getAccessToken(forceRefresh: true) }
    }
}
