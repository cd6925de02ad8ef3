import CredentialVault
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

/// A refresh whose result is discarded (the stored session changed meanwhile) revokes the
/// result's tokens, except those still stored: with a provider that does not rotate refresh
/// tokens the result carries the stored refresh token, which must stay alive.
@Suite("discarded refresh results", .ownThread)
struct DiscardedRefreshTests {
    @Test("a non-rotating provider: the discarded result's access token is revoked, never the stored refresh token",
          arguments: [nil, "rt"] as [String?])
    func keepsStoredRefreshToken(returnedRefreshToken: String?) async throws {
        let store = InMemoryStore()
        let sessionKey = Recorder<CredentialKey>()
        let stub = try StubProvider { request in
            switch (request.path, request.form["grant_type"]) {
            case ("/token", "refresh_token"):
                // Another process refreshed first (same refresh token: the provider does not rotate).
                let other = AuthSession(accessToken: "at-other", refreshToken: "rt", expiresAt: Date().addingTimeInterval(3600))
                // The stub answers on its own thread: the store's synchronous API.
                try? store.save(JSONEncoder.session.encode(other), for: sessionKey.all[0])
                return StubOIDC.tokens(access: "at-2", refresh: returnedRefreshToken)
            case ("/token", _): return StubOIDC.tokens(access: "at", refresh: "rt")
            case ("/revoke", _): return .http(status: 200, headers: [:], body: Data())
            default: return .notFound
            }
        }
        let client = try await StubOIDC.client(stub, store: store)
        sessionKey.append(client.configuration.sessionKey)
        try await StubOIDC.signIn(client)
        #expect(try await client.getAccessToken(forceRefresh: true) == "at-other")
        let revoked = stub.requests(to: "/revoke").map { $0.form["token"] }
        #expect(!revoked.contains("rt"), "the stored refresh token was revoked")
        #expect(revoked == ["at-2"])
        #expect(try await client.sessions.storedSession()?.refreshToken == "rt")
    }
}
