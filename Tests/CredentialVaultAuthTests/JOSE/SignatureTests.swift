import CSodium
import CredentialVaultAuth
import Foundation
import CredentialVaultTestSupport
import Testing

@Suite("Signature verification with generated keys", .ownThread)
struct SignatureTests {
    private func verify(_ token: String, _ keySet: JSONWebKeySet) throws {
        try JSONWebSignature(compactSerialization: token).verify(using: keySet)
    }

    @Test(arguments: JWSAlgorithm.allCases)
    func signedTokensVerify(_ algorithm: JWSAlgorithm) throws {
        let token = try TokenFactory.idToken(algorithm)
        let key = try JSONWebSignature(compactSerialization: token).verify(using: TokenFactory.keySet(algorithm))
        #expect(key.keyID == "k1")
        // Found among several keys by its kid.
        let kid = TokenFactory.fullSetKeyID(algorithm)
        let found = try JSONWebSignature(compactSerialization: TokenFactory.idToken(algorithm, kid: kid))
            .verify(using: TokenFactory.fullKeySet())
        #expect(found.keyID == kid)
    }

    @Test(arguments: JWSAlgorithm.allCases)
    func tamperedHeaderPayloadOrSignatureIsRejected(_ algorithm: JWSAlgorithm) throws {
        let token = try TokenFactory.idToken(algorithm)
        let keySet = try TokenFactory.keySet(algorithm)
        let header = try TokenFactory.json(["alg": .string(algorithm.rawValue), "kid": "k1", "typ": "at+jwt"])
        let forgedHeader = TokenFactory.replacingSegment(token, 0, with: Base64URL.encode(header))
        #expect(throws: JOSEError.badSignature) { try verify(forgedHeader, keySet) }

        var claims = TokenFactory.standardClaims()
        claims["sub"] = "mallory"
        let forgedPayload = TokenFactory.replacingSegment(token, 1, with: Base64URL.encode(try TokenFactory.json(.object(claims))))
        #expect(throws: JOSEError.badSignature) { try verify(forgedPayload, keySet) }

        let signature = try Base64URL.decode(TokenFactory.segment(token, 2))
        for position in [0, signature.count / 2, signature.count - 1] {
            var flipped = signature
            flipped[position] ^= 0x01
            #expect(throws: JOSEError.badSignature) {
                try verify(TokenFactory.replacingSegment(token, 2, with: Base64URL.encode(flipped)), keySet)
            }
        }
        for wrongLength in [signature.dropLast(), signature + [0], signature + signature, Data([0])] {
            #expect(throws: JOSEError.badSignature) {
                try verify(TokenFactory.replacingSegment(token, 2, with: Base64URL.encode(wrongLength)), keySet)
            }
        }
        // Signed by another key of the same type, published under the same kid.
        let otherKeySet = JSONWebKeySet(keys: [try TestKeys.otherKey(for: algorithm).publicKey(kid: "k1")])
        #expect(throws: JOSEError.badSignature) { try verify(token, otherKeySet) }
    }

    @Test func es256RefusesDEREncodedOrDegenerateSignatures() throws {
        let key = try TestKeys.p256.get()
        let header = try TokenFactory.json(["alg": "ES256", "kid": "k1"])
        let payload = try TokenFactory.json(.object(TokenFactory.standardClaims()))
        let derToken = try TokenFactory.compact(header: header, payload: payload, sign: key.signDER)
        #expect(throws: JOSEError.badSignature) { try verify(derToken, TokenFactory.keySet(.es256)) }
        for degenerate in [Data(count: 64), Data(repeating: 0xFF, count: 64)] {
            let token = try TokenFactory.compact(header: header, payload: payload) { _ in degenerate }
            #expect(throws: JOSEError.badSignature) { try verify(token, TokenFactory.keySet(.es256)) }
        }
    }

    @Test func unknownKeyIDIsDistinct() throws {
        for algorithm in JWSAlgorithm.allCases {
            let token = try TokenFactory.idToken(algorithm, kid: "rotated")
            #expect(throws: JOSEError.unknownKeyID) { try verify(token, TokenFactory.keySet(algorithm)) }
            // kid matching is exact.
            let upper = try TokenFactory.idToken(algorithm, kid: "K1")
            #expect(throws: JOSEError.unknownKeyID) { try verify(upper, TokenFactory.keySet(algorithm)) }
        }
        #expect(throws: JOSEError.unknownKeyID) { try verify(TokenFactory.idToken(.rs256), JSONWebKeySet(keys: [])) }
    }

    @Test func tokensWithoutKeyIDUseAnyCompatibleKey() throws {
        let token = try TokenFactory.idToken(.es256, kid: nil)
        let key = try JSONWebSignature(compactSerialization: token).verify(using: TokenFactory.fullKeySet())
        #expect(key.keyID == "ec")
        let two = JSONWebKeySet(keys: [try TestKeys.p256Other.get().publicKey(kid: "a"), try TestKeys.p256.get().publicKey(kid: "b")])
        #expect(try JSONWebSignature(compactSerialization: token).verify(using: two).keyID == "b")
        // No key of the right type at all: maybe the JWKS is stale.
        #expect(throws: JOSEError.unknownKeyID) { try verify(token, TokenFactory.keySet(.rs256)) }
    }

    @Test func keyTypeConfusionIsRejected() throws {
        // An RS256 token whose kid names an EC key (and every other cross combination).
        for algorithm in JWSAlgorithm.allCases {
            for other in JWSAlgorithm.allCases where other != algorithm {
                let token = try TokenFactory.idToken(algorithm, kid: "k1")
                let wrongType = try TokenFactory.keySet(other, kid: "k1")
                #expect(throws: JOSEError.keyMismatch("key type \(wrongType.keys[0].keyType) cannot be used with \(algorithm.rawValue)")) {
                    try verify(token, wrongType)
                }
                // The same, calling the key directly.
                let jws = try JSONWebSignature(compactSerialization: token)
                expectThrows({ (error: JOSEError) in error.kind == "keyMismatch" }) { try jws.verify(with: wrongType.keys[0]) }
            }
        }
    }

    @Test func duplicateKeyIDAcrossTypesSelectsTheCompatibleKey() throws {
        let keySet = JSONWebKeySet(keys: [try TestKeys.rsa.get().publicKey(kid: "same"), try TestKeys.p256.get().publicKey(kid: "same")])
        try verify(try TokenFactory.idToken(.es256, kid: "same"), keySet)
        try verify(try TokenFactory.idToken(.rs256, kid: "same"), keySet)
    }

    @Test func keyRestrictionsAreEnforced() throws {
        let rsa = try TestKeys.rsa.get()
        let token = try TokenFactory.idToken(.rs256)
        let cases: [([String: JSONValue], String)] = [
            (rsa.jwk(kid: "k1", alg: "RS512"), "key is restricted to another algorithm"),
            (rsa.jwk(kid: "k1", alg: "ES256"), "key is restricted to another algorithm"),
            (rsa.jwk(kid: "k1", use: "enc"), "key is not for signatures"),
            (rsa.jwk(kid: "k1", extra: ["key_ops": ["sign", "encrypt"]]), "key_ops does not allow verify"),
        ]
        for (members, reason) in cases {
            let keySet = JSONWebKeySet(keys: [try JSONWebKey(members: members)])
            #expect(throws: JOSEError.keyMismatch(reason)) { try verify(token, keySet) }
        }
        try verify(token, JSONWebKeySet(keys: [try JSONWebKey(members: rsa.jwk(kid: "k1", alg: "RS256", use: "sig"))]))
    }

    @Test func hmacWithThePublicKeyAsSecretIsRefused() throws {
        // The classic confusion attack: HS256 keyed with the RSA public key's bytes.
        let rsa = try TestKeys.rsa.get()
        let secret = rsa.publicA
        let header = try TokenFactory.json(["alg": "HS256", "kid": "k1"])
        let payload = try TokenFactory.json(.object(TokenFactory.standardClaims()))
        let token = try TokenFactory.compact(header: header, payload: payload) { input in
            var state = crypto_auth_hmacsha256_state()
            var mac = [UInt8](repeating: 0, count: 32)
            let bytes = Array(input)
            crypto_auth_hmacsha256_init(&state, secret, secret.count)
            crypto_auth_hmacsha256_update(&state, bytes, UInt64(bytes.count))
            crypto_auth_hmacsha256_final(&state, &mac)
            return Data(mac)
        }
        #expect(throws: JOSEError.unsupportedAlgorithm("HS256")) { try verify(token, TokenFactory.keySet(.rs256)) }
    }

    @Test func weakRSAKeysAreRefusedEvenWithAValidSignature() throws {
        let weak = try TestKeys.rsa1024.get()
        let token = try TokenFactory.token(
            header: ["alg": "RS256", "kid": "weak"], claims: .object(TokenFactory.standardClaims()), key: weak)
        #expect(throws: JOSEError.invalidKey("RSA modulus shorter than 2048 bits")) { try weak.publicKey(kid: "weak") }
        let keySet = try JSONWebKeySet(json: TokenFactory.json(["keys": [.object(weak.jwk(kid: "weak"))]]))
        #expect(keySet.keys.isEmpty)
        #expect(throws: JOSEError.keyMismatch("the key with this kid was rejected: invalid key: RSA modulus shorter than 2048 bits")) {
            try verify(token, keySet)
        }
    }

    @Test func algorithmAllowListIsApplied() throws {
        let token = try JSONWebSignature(compactSerialization: TokenFactory.idToken(.edDSA))
        #expect(throws: JOSEError.unsupportedAlgorithm("EdDSA")) {
            try token.verify(using: TokenFactory.keySet(.edDSA), allowedAlgorithms: [.rs256, .es256])
        }
        let odd = try TokenFactory.token(
            header: ["alg": "R\u{212A}S256"], claims: [:], key: TestKeys.rsa.get())
        #expect(throws: JOSEError.unsupportedAlgorithm("(unrecognised)")) {
            try JSONWebSignature(compactSerialization: odd).verify(using: TokenFactory.keySet(.rs256))
        }
    }

    @Test func concurrentVerificationIsSafe() async throws {
        let keySet = try TokenFactory.fullKeySet()
        let tokens = try [
            TokenFactory.idToken(.rs256, kid: "rsa"), TokenFactory.idToken(.es256, kid: "ec"),
            TokenFactory.idToken(.edDSA, kid: "ed"),
        ]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<60 {
                let token = tokens[index % 3]
                group.addTask { try JSONWebSignature(compactSerialization: token).verify(using: keySet) }
            }
            try await group.waitForAll()
        }
    }
}
