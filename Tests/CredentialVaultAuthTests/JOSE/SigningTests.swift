import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

@Suite("JWS signing")
struct SigningTests {
    static let claims: [String: JSONValue] = ["iss": "client", "n": 1_700_000_000, "s": "a\"b\\c/é\n"]

    static func pem(_ file: URL) throws -> SecureBytes { SecureBytes(copying: Array(try Data(contentsOf: file))) }

    @Test("keys made by openssl sign tokens that Python's cryptography verifies", arguments: ["EC", "RSA", "ED25519"])
    func independentlyVerified(algorithm: String) throws {
        let directory = TempDirectory()
        let file = try IndependentJOSE.openSSLKey(algorithm, in: directory, "key.pem")
        let key = try JWSSigningKey(privateKey: Self.pem(file))
        let token = try JWSSigner(key: key).sign(claims: Self.claims)
        let (header, claims) = try IndependentJOSE.verify(token, keyFile: file)
        #expect(header["alg"] as? String == key.algorithm.rawValue)
        #expect(header["kid"] as? String == key.keyID)
        #expect(claims["s"] as? String == "a\"b\\c/é\n")
        // NumericDate values are JSON integers (glewlwyd reads them as integers).
        #expect(token.split(separator: ".").count == 3)
        #expect(String(decoding: try Base64URL.decode(String(token.split(separator: ".")[1])), as: UTF8.self).contains(#""n":1700000000"#))
    }

    @Test("generated keys sign tokens this library's verifiers accept", arguments: JWSAlgorithm.allCases)
    func verifiedByOwnVerifiers(algorithm: JWSAlgorithm) throws {
        let key = try JWSSigningKey.generate(algorithm, keyID: "k1")
        #expect(key.algorithm == algorithm)
        for _ in 0..<20 {
            let token = try JWSSigner(key: key).sign(claims: Self.claims)
            let jws = try JSONWebSignature(compactSerialization: token)
            try jws.verify(using: JSONWebKeySet(keys: [key.publicKey]), allowedAlgorithms: [algorithm])
        }
    }

    @Test("a private JWK gives the same key as the PEM it was exported from", arguments: ["EC", "RSA", "ED25519"])
    func privateJWK(algorithm: String) throws {
        let directory = TempDirectory()
        let file = try IndependentJOSE.openSSLKey(algorithm, in: directory, "key.pem")
        let fromPEM = try JWSSigningKey(privateKey: Self.pem(file))
        let fromJWK = try JWSSigningKey(privateKey: SecureBytes(copying: Array(IndependentJOSE.privateJWK(of: file).utf8)))
        #expect(fromJWK.thumbprint == fromPEM.thumbprint)
        #expect(fromJWK.publicKey.material == fromPEM.publicKey.material)
        _ = try IndependentJOSE.verify(try JWSSigner(key: fromJWK).sign(claims: Self.claims), keyFile: file)
    }

    @Test("a private JWK whose public members belong to another key is refused", arguments: ["EC", "ED25519"])
    func mismatchedJWK(algorithm: String) throws {
        let directory = TempDirectory()
        let one = try IndependentJOSE.privateJWK(of: IndependentJOSE.openSSLKey(algorithm, in: directory, "1.pem"))
        let two = try IndependentJOSE.privateJWK(of: IndependentJOSE.openSSLKey(algorithm, in: directory, "2.pem"))
        guard case .object(var first) = try JSONValue.parse(Data(one.utf8)), case .object(let second) = try JSONValue.parse(Data(two.utf8)) else {
            Issue.record("not JSON objects")
            return
        }
        first["x"] = second["x"]
        #expect(throws: JOSEError.self) { try JWSSigningKey(privateKey: SecureBytes(copying: Array(JSONValue.object(first).serialized.utf8))) }
    }

    @Test("a traditional EC PRIVATE KEY PEM is read like PKCS#8")
    func traditionalPEM() throws {
        let directory = TempDirectory()
        let file = try IndependentJOSE.openSSLKey("EC", in: directory, "key.pem")
        let traditional = directory.path("trad.pem")
        try IndependentJOSE.run("/usr/bin/openssl", ["ec", "-in", file.path, "-out", traditional.path])
        #expect(try JWSSigningKey(privateKey: Self.pem(traditional)).thumbprint == JWSSigningKey(privateKey: Self.pem(file)).thumbprint)
    }

    @Test("an encrypted PEM is refused without asking for a passphrase")
    func encryptedPEM() throws {
        let directory = TempDirectory()
        let file = try IndependentJOSE.openSSLKey("EC", in: directory, "key.pem", extra: ["-aes256", "-pass", "pass:secret"])
        #expect(throws: JOSEError.self) { try JWSSigningKey(privateKey: Self.pem(file)) }
    }

    @Test("keys this library does not sign with are refused: P-384, RSA under 2048 bits, not a key", arguments: ["EC-P384", "RSA-1024", "garbage"])
    func unsupportedKeys(kind: String) throws {
        let directory = TempDirectory()
        let bytes: SecureBytes
        if kind == "garbage" {
            bytes = SecureBytes(copying: Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8))
        } else {
            bytes = try Self.pem(IndependentJOSE.openSSLKey(kind, in: directory, "key.pem"))
        }
        #expect(throws: JOSEError.self) { try JWSSigningKey(privateKey: bytes) }
    }

    @Test("an HS256 token verifies with the shared secret in Python's hmac")
    func hmac() throws {
        let token = try JWSSigner.hmacSHA256(secret: SecureBytes(copying: Array("s3cret-shared".utf8))).sign(claims: Self.claims)
        let (header, _) = try IndependentJOSE.verify(token, secret: "s3cret-shared")
        #expect(header["alg"] as? String == "HS256")
        #expect(header["kid"] == nil)
    }

    @Test("a DPoP-style header carries the public JWK and the type, never private members")
    func embeddedPublicKey() throws {
        let key = try JWSSigningKey.generate(.es256)
        let token = try JWSSigner(key: key).sign(claims: Self.claims, type: "dpop+jwt", embedsPublicKey: true)
        let jws = try JSONWebSignature(compactSerialization: token)
        #expect(jws.header.type == "dpop+jwt")
        let header = String(decoding: try Base64URL.decode(String(token.split(separator: ".")[0])), as: UTF8.self)
        #expect(header.contains(#""jwk":{"crv":"P-256","kty":"EC","x":"#))
        #expect(!header.contains(#""d":"#))
        #expect(!header.contains("kid"))
    }

    @Test("a signing key's description names its algorithm and id, never key material")
    func description() throws {
        let directory = TempDirectory()
        let file = try IndependentJOSE.openSSLKey("EC", in: directory, "key.pem")
        let key = try JWSSigningKey(privateKey: Self.pem(file), keyID: "client-key-1")
        let jwk = try IndependentJOSE.privateJWK(of: file)
        guard case .object(let members) = try JSONValue.parse(Data(jwk.utf8)), let d = members["d"]?.stringValue else {
            Issue.record("no d")
            return
        }
        for text in ["\(key)", String(reflecting: key), "\(ClientAuthentication.privateKeyJWT(key: key))"] {
            #expect(text.contains("ES256"))
            #expect(!text.contains(d))
            #expect(!text.contains("PRIVATE"))
        }
        #expect(!"\(ClientAuthentication.clientSecretJWT(secret: "hunter2"))".contains("hunter2"))
    }
}
