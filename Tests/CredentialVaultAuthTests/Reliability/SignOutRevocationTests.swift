import CredentialVault
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

/// What a sign-out revokes at the provider.
@Suite("revocation at sign-out", .ownThread)
struct SignOutRevocationTests {
    @Test("the access token is revoked even when revoking the refresh token fails")
    func revokesAccessTokenAfterFailure() async throws {
        let stub = try StubProvider { request in
            switch request.path {
            case "/token": return StubOIDC.tokens(access: "at", refresh: "rt")
            case "/revoke": return request.form["token"] == "rt" ? .http(status: 503, headers: [:], body: Data()) : .http(status: 200, headers: [:], body: Data())
            default: return .notFound
            }
        }
        let client = try await StubOIDC.client(stub)
        try await StubOIDC.signIn(client)
        let result = try await client.signOut()
        #expect(stub.requests(to: "/revoke").map { $0.form["token"] } == ["rt", "at"])
        #expect(!result.revoked && result.revocationError == .serverUnavailable(status: 503))
    }
}
