import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

/// DPoP proofs (RFC 9449 section 4.2), the nonce cache and the session key's storage form.
@Suite("DPoP proofs and nonces", .ownThread)
struct DPoPProofTests {
    static func parts(_ jwt: String) throws -> (header: [String: JSONValue], claims: [String: JSONValue]) {
        let pieces = jwt.split(separator: ".").map(String.init)
        try #require(pieces.count == 3)
        return (
            try #require(try JSONValue.parse(Base64URL.decode(pieces[0])).objectValue),
            try #require(try JSONValue.parse(Base64URL.decode(pieces[1])).objectValue)
        )
    }

    @Test("htu drops the query and the fragment and keeps the rest as given")
    func targetWithoutQueryAndFragment() {
        #expect(DPoPProof.target(of: URL(string: "https://rs.example/api/v1/items?page=2&q=x#top")!) == "https://rs.example/api/v1/items")
        #expect(DPoPProof.target(of: URL(string: "http://127.0.0.1:8080/api/oidc/token")!) == "http://127.0.0.1:8080/api/oidc/token")
    }

    @Test("htu carries no user information: a password in the URL never travels inside a proof")
    func targetWithoutUserInformation() {
        #expect(DPoPProof.target(of: URL(string: "https://user:s3cret@rs.example/api?x=1")!) == "https://rs.example/api")
        #expect(DPoPProof.target(of: URL(string: "https://user@rs.example:8443/api")!) == "https://rs.example:8443/api")
    }

    @Test("claims: htm upper case, iat a second behind now in whole seconds (never ahead of a coarse server clock), a fresh jti each time, ath and nonce when given")
    func claims() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000.9)
        let url = URL(string: "https://rs.example/r?x=1")!
        let a = DPoPProof(method: "get", url: url, now: now, accessToken: "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU", nonce: "n-1")
        let b = DPoPProof(method: "GET", url: url, now: now)
        #expect(a.claims["htm"] == .string("GET"))
        #expect(a.claims["htu"] == .string("https://rs.example/r"))
        #expect(a.claims["iat"] == .number(1_799_999_999))
        // RFC 9449 section 7.1's example access token and its ath.
        #expect(a.claims["ath"] == .string("fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"))
        #expect(a.claims["nonce"] == .string("n-1"))
        #expect(a.jti != b.jti && a.jti.count >= 22)
        #expect(b.claims["ath"] == nil && b.claims["nonce"] == nil)
    }

    @Test("a signed proof has typ dpop+jwt, ES256 and the public key (no private member, no kid) in its header")
    func signedHeader() throws {
        let key = try JWSSigningKey.generate(.es256)
        let proof = try DPoPProof(method: "POST", url: URL(string: "https://as.example/token")!, now: Date()).signed(by: key)
        let (header, claims) = try Self.parts(proof)
        #expect(header["typ"] == .string("dpop+jwt"))
        #expect(header["alg"] == .string("ES256"))
        #expect(header["kid"] == nil)
        let jwk = try #require(header["jwk"]?.objectValue)
        #expect(jwk["d"] == nil && jwk["kid"] == nil)
        #expect(jwk["x"] == key.publicJWK["x"] && jwk["y"] == key.publicJWK["y"])
        #expect(claims["htu"] == .string("https://as.example/token"))
    }

    @Test("the session key survives its PEM form: same thumbprint after export and import")
    func keyRoundTrip() throws {
        let (key, pem) = try DPoPProver.newKey()
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(try DPoPProver.key(stored: pem).thumbprint == key.thumbprint)
        #expect(throws: AuthError.self) { try DPoPProver.key(stored: "not a key") }
    }

    @Test("nonces are kept per origin (scheme, host, port) and shared through the store")
    func noncesPerOrigin() async throws {
        let store = InMemoryStore()
        let key = CredentialKey(service: "t", account: "nonces")
        let cache = DPoPNonceCache(store: store, key: key, options: .default)
        let token = URL(string: "https://as.example/token")!
        await cache.learn(from: HTTPResponse(status: 400, headers: ["DPoP-Nonce": "n1"]), for: token)
        await cache.learn(from: HTTPResponse(status: 200, headers: ["DPoP-Nonce": "r1"]), for: URL(string: "https://rs.example/x")!)
        #expect(await cache.nonce(for: URL(string: "https://as.example:443/other?q")!) == "n1")
        #expect(await cache.nonce(for: URL(string: "https://as.example:8443/token")!) == nil)
        #expect(await cache.nonce(for: URL(string: "http://as.example/token")!) == nil)
        #expect(await cache.nonce(for: URL(string: "https://rs.example/y")!) == "r1")
        // Another process sharing the store starts with the latest nonces.
        let other = DPoPNonceCache(store: store, key: key, options: .default)
        #expect(await other.nonce(for: token) == "n1")
        // A nonce outside RFC 9449's characters is ignored.
        await cache.learn(from: HTTPResponse(status: 200, headers: ["DPoP-Nonce": "bad\"nonce"]), for: token)
        #expect(await cache.nonce(for: token) == "n1")
        await cache.clear()
        #expect(try await store.load(key) == nil)
        #expect(await cache.nonce(for: token) == nil)
    }

    @Test("a nonce challenge is 400 use_dpop_nonce or 401 with WWW-Authenticate DPoP error=use_dpop_nonce")
    func nonceChallenges() {
        #expect(DPoPProver.isNonceChallenge(HTTPResponse(status: 400, body: Data(#"{"error":"use_dpop_nonce"}"#.utf8))))
        #expect(DPoPProver.isNonceChallenge(HTTPResponse(
            status: 401, headers: ["WWW-Authenticate": #"DPoP error="use_dpop_nonce", error_description="Resource server requires nonce""#])))
        #expect(!DPoPProver.isNonceChallenge(HTTPResponse(status: 400, body: Data(#"{"error":"invalid_dpop_proof"}"#.utf8))))
        #expect(!DPoPProver.isNonceChallenge(HTTPResponse(status: 401, headers: ["WWW-Authenticate": #"DPoP error="invalid_token""#])))
        #expect(!DPoPProver.isNonceChallenge(HTTPResponse(status: 401)))
    }

    @Test("token_type must match the request: DPoP only with a proof, Bearer only without")
    func tokenTypeMatchesTheProof() throws {
        try OAuthEndpointClient.checkTokenType("DPoP", proofSent: true)
        try OAuthEndpointClient.checkTokenType("bearer", proofSent: false)
        #expect(throws: AuthError.self) { try OAuthEndpointClient.checkTokenType("DPoP", proofSent: false) }
        #expect(throws: AuthError.self) { try OAuthEndpointClient.checkTokenType("Bearer", proofSent: true) }
        #expect(throws: AuthError.self) { try OAuthEndpointClient.checkTokenType("mac", proofSent: false) }
    }
}
