import CredentialVault
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

/// The JWKS is cached for a bounded time (it was once cached forever), and a token with an
/// unknown `kid` (forged ones included: `verifyIDToken` is public) causes at most one refetch
/// per cooldown, not one fetch each.
@Suite("JWKS cache", .ownThread)
struct KeySetCacheTests {
    /// A provider serving the ES256 test key as `k1`, with `cacheControl`, and a client on a manual clock.
    static func fixture(cacheControl: String? = nil) async throws -> (StubProvider, OIDCClient, ManualClock) {
        let jwks = try TokenFactory.json(.object(["keys": .array([.object(try TestKeys.key(for: .es256).jwk(kid: "k1"))])]))
        var headers = ["Content-Type": "application/json"]
        if let cacheControl { headers["Cache-Control"] = cacheControl }
        let served = headers
        let stub = try StubProvider { request in
            request.path == "/jwks" ? .http(status: 200, headers: served, body: jwks) : .notFound
        }
        let clock = ManualClock(start: TokenFactory.now)
        return (stub, try await StubOIDC.client(stub, clock: clock), clock)
    }

    static func token(_ stub: StubProvider, kid: String = "k1") throws -> String {
        try TokenFactory.idToken(.es256, kid: kid) { claims in
            claims["iss"] = .string(stub.base)
            claims["exp"] = .number(TokenFactory.now.timeIntervalSince1970 + 7 * 86_400)
        }
    }

    @Test("20 tokens with unknown kids cause one refetch per cooldown, not one each")
    func unknownKidCooldown() async throws {
        let (stub, client, clock) = try await Self.fixture()
        #expect(try await client.verifyIDToken(try Self.token(stub), nonce: TokenFactory.nonce).subject == "alice")
        for n in 0..<20 {
            await #expect(throws: AuthError.invalidIDToken(IDTokenError.unknownKeyID.reason)) {
                _ = try await client.verifyIDToken(try Self.token(stub, kid: "forged-\(n)"), nonce: TokenFactory.nonce)
            }
        }
        #expect(stub.requests(to: "/jwks").count == 2)
        clock.advance(by: .seconds(61))
        _ = try? await client.verifyIDToken(try Self.token(stub, kid: "forged-late"), nonce: TokenFactory.nonce)
        #expect(stub.requests(to: "/jwks").count == 3, "a new window allows one more refetch")
    }

    @Test("the key set is refetched when its lifetime ends: 1 hour by default, max-age within 1 minute ... 1 day",
          arguments: [(nil, 3_600.0), ("max-age=300", 300), ("public, max-age=5", 60), ("max-age=99999999999", 86_400), ("max-age=000000000000300", 300), ("no-store", 60)]
              as [(String?, TimeInterval)])
    func lifetime(cacheControl: String?, seconds: TimeInterval) async throws {
        let (stub, client, clock) = try await Self.fixture(cacheControl: cacheControl)
        let token = try Self.token(stub)
        _ = try await client.verifyIDToken(token, nonce: nil)
        clock.advance(by: .seconds(seconds - 1))
        _ = try await client.verifyIDToken(token, nonce: nil)
        #expect(stub.requests(to: "/jwks").count == 1)
        clock.advance(by: .seconds(2))
        _ = try await client.verifyIDToken(token, nonce: nil)
        #expect(stub.requests(to: "/jwks").count == 2)
    }
}
