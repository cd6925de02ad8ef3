import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultAuth

@Suite("Client assertions (private_key_jwt, client_secret_jwt)")
struct ClientAssertionTests {
    static let metadata = ProviderMetadata(
        issuer: "https://idp.example/realm", authorizationEndpoint: nil,
        tokenEndpoint: URL(string: "https://idp.example/realm/token")!, jwksURI: nil,
        revocationEndpoint: URL(string: "https://idp.example/realm/revoke")!)
    static let now = Date(timeIntervalSince1970: 1_800_000_000.75)

    /// The form `authentication` produces for a request to `endpoint`.
    static func form(_ authentication: ClientAuthentication, endpoint: URL = metadata.tokenEndpoint) throws -> ([String: String], [String: String]) {
        var form: [(String, String)] = []
        var headers: [String: String] = [:]
        try authentication.apply(clientID: "svc", endpoint: endpoint, metadata: metadata, now: now, form: &form, headers: &headers)
        return (Dictionary(form, uniquingKeysWith: { _, _ in "(duplicate)" }), headers)
    }

    static func claims(_ form: [String: String]) throws -> [String: JSONValue] {
        let token = try #require(form["client_assertion"])
        guard case .object(let claims) = try JSONValue.parse(JSONWebSignature(compactSerialization: token).payload) else {
            throw JOSEError.malformedToken("claims")
        }
        return claims
    }

    @Test("private_key_jwt sends a signed assertion naming the client, the endpoint, a minute of validity")
    func privateKeyJWT() throws {
        let key = try JWSSigningKey.generate(.es256)
        let (form, headers) = try Self.form(.privateKeyJWT(key: key))
        #expect(headers["Authorization"] == nil)
        #expect(form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        #expect(form["client_id"] == "svc")
        #expect(form["client_secret"] == nil)
        let jws = try JSONWebSignature(compactSerialization: try #require(form["client_assertion"]))
        try jws.verify(with: key.publicKey)
        let claims = try Self.claims(form)
        #expect(claims["iss"] == "svc")
        #expect(claims["sub"] == "svc")
        #expect(claims["aud"] == "https://idp.example/realm/token")
        #expect(claims["iat"] == 1_800_000_000)
        #expect(claims["exp"] == 1_800_000_060)
        #expect((claims["jti"]?.stringValue?.count ?? 0) >= 22)
    }

    @Test("every request gets a new jti")
    func freshJTI() throws {
        let key = try JWSSigningKey.generate(.edDSA)
        var seen = Set<String>()
        for _ in 0..<50 {
            let jti = try #require(try Self.claims(Self.form(.privateKeyJWT(key: key)).0)["jti"]?.stringValue)
            #expect(seen.insert(jti).inserted)
        }
    }

    @Test(
        "the audience is the request's endpoint, the token endpoint, the issuer or a given string",
        arguments: [
            (ClientAssertionAudience.requestEndpoint, "https://idp.example/realm/revoke"),
            (.tokenEndpoint, "https://idp.example/realm/token"),
            (.issuer, "https://idp.example/realm"),
            (.explicit("urn:example:as"), "urn:example:as"),
        ])
    func audience(choice: ClientAssertionAudience, expected: String) throws {
        let key = try JWSSigningKey.generate(.es256)
        let revoke = try #require(Self.metadata.revocationEndpoint)
        #expect(try Self.claims(Self.form(.privateKeyJWT(key: key, audience: choice), endpoint: revoke).0)["aud"] == .string(expected))
        #expect(try Self.claims(Self.form(.clientSecretJWT(secret: "x", audience: choice), endpoint: revoke).0)["aud"] == .string(expected))
    }

    @Test("client_secret_jwt signs with HS256 and never sends the secret")
    func clientSecretJWT() throws {
        let (form, headers) = try Self.form(.clientSecretJWT(secret: "shared-s3cret"))
        #expect(headers["Authorization"] == nil)
        #expect(!form.values.contains { $0.contains("shared-s3cret") })
        let (header, claims) = try IndependentJOSE.verify(try #require(form["client_assertion"]), secret: "shared-s3cret")
        #expect(header["alg"] as? String == "HS256")
        #expect(claims["iss"] as? String == "svc")
    }

    @Test("an empty client_secret_jwt secret is a configuration error, not an assertion")
    func emptySecret() {
        #expect(throws: AuthError.self) { try Self.form(.clientSecretJWT(secret: "")) }
    }

    @Test("assertion-based methods are confidential")
    func confidential() throws {
        #expect(ClientAuthentication.clientSecretJWT(secret: "x").isConfidential)
        #expect(ClientAuthentication.privateKeyJWT(key: try JWSSigningKey.generate(.rs256)).isConfidential)
    }

    @Test("a refused client names what an assertion depends on, not only a secret")
    func refusalAdviceCoversAssertions() {
        let advice = AuthError.invalidCredentials.description
        #expect(advice.contains("secret"))
        #expect(advice.contains("key"))
        #expect(advice.contains("audience"))
    }
}
