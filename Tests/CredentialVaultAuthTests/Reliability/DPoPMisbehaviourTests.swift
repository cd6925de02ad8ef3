import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultAuth

/// A provider that misbehaves with DPoP (no real one does these): a stub server.
@Suite("DPoP against a misbehaving provider", .ownThread)
struct DPoPMisbehaviourTests {
    static func nonceChallenge(_ nonce: String) -> StubProvider.Reply {
        .http(status: 400, headers: ["Content-Type": "application/json", "DPoP-Nonce": nonce], body: Data(#"{"error":"use_dpop_nonce"}"#.utf8))
    }

    static func dpopClient(_ stub: StubProvider) async throws -> OIDCClient {
        var configuration = StubOIDC.configuration(stub)
        configuration.dpop = true
        return try await OIDCClient(configuration: configuration, store: InMemoryStore(), logger: .credentialVaultSilent)
    }

    @Test("a token endpoint asking for a new nonce forever gets exactly one retry, then a use_dpop_nonce error")
    func nonceForeverRetriedOnce() async throws {
        let counter = Counter()
        let stub = try StubProvider { _ in Self.nonceChallenge("n\(counter.next())") }
        let client = try await Self.dpopClient(stub)
        await #expect(throws: AuthError.providerError(code: "use_dpop_nonce", description: nil)) { try await StubOIDC.signIn(client) }
        let requests = stub.requests(to: "/token")
        #expect(requests.count == 2)
        // The retry carries the nonce the first answer gave, in a new proof.
        let first = try DPoPProofTests.parts(try #require(requests[0].headers["dpop"])).claims
        let second = try DPoPProofTests.parts(try #require(requests[1].headers["dpop"])).claims
        #expect(first["nonce"] == nil)
        #expect(second["nonce"] == .string("n0"))
        #expect(first["jti"] != second["jti"])
    }

    @Test("sign-in sends dpop_jkt with the thumbprint of the key whose proofs reach the token endpoint")
    func dpopJKT() async throws {
        let stub = try StubProvider { _ in .json(#"{"access_token":"at","token_type":"DPoP","expires_in":60}"#) }
        let client = try await Self.dpopClient(stub)
        let request = try await client.beginAuthorization(redirectURI: StubOIDC.redirectURI)
        let jkt = try #require(FormEncoding.parameters(of: request.url)["dpop_jkt"])
        let session = try await client.handleRedirect(url: URL(string: "\(StubOIDC.redirectURI)?code=c&state=\(request.state)")!)
        #expect(session.isDPoPBound)
        #expect(try DPoPProver.key(stored: try #require(session.dpopKey)).thumbprint == jkt)
    }

    @Test("a DPoP token to a request without a proof is refused, and a Bearer token to a proof")
    func tokenTypeMismatchRefused() async throws {
        let stub = try StubProvider { _ in .json(#"{"access_token":"at","token_type":"DPoP","expires_in":60}"#) }
        let plain = try await StubOIDC.client(stub)
        await #expect(throws: AuthError.invalidResponse("the provider issued a DPoP-bound token to a request without a DPoP proof")) {
            try await StubOIDC.signIn(plain)
        }
        let bearer = try StubProvider { _ in StubOIDC.tokens() }
        let dpop = try await Self.dpopClient(bearer)
        await #expect(throws: AuthError.self) { try await StubOIDC.signIn(dpop) }
        #expect(try await dpop.sessions.storedSession() == nil)
    }

    @Test("a resource asking for a new nonce forever gets exactly one retry; its 401 is returned")
    func resourceNonceForever() async throws {
        let counter = Counter()
        let stub = try StubProvider { request in
            if request.path == "/token" { return .json(#"{"access_token":"at","token_type":"DPoP","expires_in":3600}"#) }
            return .http(
                status: 401, headers: ["WWW-Authenticate": #"DPoP error="use_dpop_nonce""#, "DPoP-Nonce": "r\(counter.next())"], body: Data())
        }
        let client = try await Self.dpopClient(stub)
        try await StubOIDC.signIn(client)
        let response = try await client.send(authorized: HTTPRequest(url: stub.url("/api"), timeout: .seconds(5)))
        #expect(response.status == 401)
        let requests = stub.requests(to: "/api")
        #expect(requests.count == 2)
        #expect(requests.allSatisfy { $0.headers["authorization"] == "DPoP at" })
        let second = try DPoPProofTests.parts(try #require(requests[1].headers["dpop"])).claims
        #expect(second["nonce"] == .string("r0"))
        #expect(second["ath"] == .string(DPoPProof.accessTokenHash("at")))
    }
}

/// A thread-safe counter for stub answers.
private final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int {
        value.withLock { count in
            defer { count += 1 }
            return count
        }
    }
}
