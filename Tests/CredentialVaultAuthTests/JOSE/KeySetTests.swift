@testable import CredentialVaultAuth
import Foundation
import CredentialVaultTestSupport
import Testing

@Suite("JWK and JWK Set parsing", .ownThread)
struct KeySetTests {
    private func document(_ keys: [JSONValue]) throws -> Data {
        try TokenFactory.json(["keys": .array(keys)])
    }

    @Test func parsesSupportedKeysAndSkipsTheRest() throws {
        let rsa = try TestKeys.rsa.get()
        let ec = try TestKeys.p256.get()
        let ed = try TestKeys.ed25519.get()
        let weak = try TestKeys.rsa1024.get()
        let json = try document([
            .object(rsa.jwk(kid: "rsa", alg: "RS256", use: "sig")),
            .object(ec.jwk(kid: "ec", alg: "ES256")),
            .object(ed.jwk(kid: "ed")),
            ["kty": "oct", "k": "c2VjcmV0", "kid": "hmac"],
            ["kty": "EC", "crv": "P-384", "x": "AA", "y": "AA", "kid": "p384"],
            ["kty": "OKP", "crv": "Ed448", "x": "AA", "kid": "ed448"],
            .object(weak.jwk(kid: "weak")),
            ["kty": "RSA", "e": "AQAB", "kid": "no-n"],
            ["kid": "no-kty"],
            "not an object",
            ["kty": "FUTURE", "kid": "future"],
        ])
        let set = try JSONWebKeySet(json: json)
        #expect(set.keys.map(\.keyID) == ["rsa", "ec", "ed"])
        #expect(set.keys.map(\.keyType) == ["RSA", "EC", "OKP"])
        #expect(set.skippedKeys.count == 8)
        #expect(set.skippedKeys.first { $0.keyID == "weak" }?.reason == "invalid key: RSA modulus shorter than 2048 bits")
        #expect(set.skippedKeys.first { $0.keyID == "hmac" }?.reason == "invalid key: unsupported key type")
        #expect(set.skippedKeys.first { $0.keyID == "p384" }?.reason == "invalid key: unsupported EC curve")
        #expect(set.keys(withID: "ec").count == 1)
        #expect(set.keys(withID: "EC").isEmpty)
        #expect(set.keys[0].algorithm == "RS256")
        #expect(set.keys[0].use == "sig")
    }

    @Test(arguments: [
        "", "[]", "{}", #"{"keys":{}}"#, #"{"keys":"x"}"#, "not json", #"{"keys":[],"keys":[]}"#,
    ])
    func rejectsBadDocuments(_ text: String) {
        expectThrows({ (error: JOSEError) in ["invalidJSON", "invalidKey"].contains(error.kind) }) { try JSONWebKeySet(json: Data(text.utf8)) }
    }

    @Test func boundsDocumentSizeAndKeyCount() throws {
        let tooBig = Data(repeating: 0x20, count: JSONWebKeySet.maximumSize + 1)
        #expect(throws: JOSEError.invalidKey("JWK Set exceeds 262144 bytes")) { try JSONWebKeySet(json: tooBig) }
        let many = try document(Array(repeating: ["kty": "oct"], count: JSONWebKeySet.maximumKeyCount + 1))
        #expect(throws: JOSEError.invalidKey("JWK Set has too many keys")) { try JSONWebKeySet(json: many) }
        let empty = try JSONWebKeySet(json: Data(#"{"keys":[]}"#.utf8))
        #expect(empty.keys.isEmpty)
    }

    @Test func rejectsPointsOffTheCurve() throws {
        let ec = try TestKeys.p256.get()
        var y = ec.publicB
        y[31] ^= 0x01
        let offCurve = ec.jwk(kid: "bad", extra: ["y": .string(Base64URL.encode(y))])
        #expect(throws: JOSEError.invalidKey("point is not on P-256")) { try JSONWebKey(members: offCurve) }
        let zero = ec.jwk(kid: "zero", extra: ["x": .string(Base64URL.encode([UInt8](repeating: 0, count: 32))),
            "y": .string(Base64URL.encode([UInt8](repeating: 0, count: 32)))])
        #expect(throws: JOSEError.invalidKey("point is not on P-256")) { try JSONWebKey(members: zero) }
        // Coordinates beyond the field prime.
        let huge = ec.jwk(kid: "huge", extra: ["x": .string(Base64URL.encode([UInt8](repeating: 0xFF, count: 32)))])
        expectThrows({ (error: JOSEError) in error.kind == "invalidKey" }) { try JSONWebKey(members: huge) }
    }

    @Test func shortenedCoordinatesAreLeftPaddedAndLongOnesRefused() throws {
        // Some providers (glewlwyd) drop a leading zero byte: the same integer, padded back.
        #expect(try JSONWebKey.fullLengthCoordinate(Data([1, 2])) == Data(repeating: 0, count: 30) + Data([1, 2]))
        let ec = try TestKeys.p256.get()
        // Dropping a non-zero leading byte names another point: refused as not on the curve.
        let short = ec.jwk(kid: "s", extra: ["x": .string(Base64URL.encode(ec.publicA.dropFirst()))])
        #expect(throws: JOSEError.invalidKey("point is not on P-256")) { try JSONWebKey(members: short) }
        let long = ec.jwk(kid: "l", extra: ["x": .string(Base64URL.encode([0] + ec.publicA))])
        #expect(throws: JOSEError.invalidKey("P-256 coordinates are at most 32 bytes")) { try JSONWebKey(members: long) }
        let ed = try TestKeys.ed25519.get()
        let longEd = ed.jwk(kid: "l", extra: ["x": .string(Base64URL.encode(ed.publicA + [0]))])
        #expect(throws: JOSEError.invalidKey("Ed25519 keys must be 32 bytes")) { try JSONWebKey(members: longEd) }
    }

    @Test func rejectsSmallOrderEd25519Keys() throws {
        var identity = [UInt8](repeating: 0, count: 32)
        identity[0] = 1
        for point in [identity, [UInt8](repeating: 0, count: 32), [UInt8](repeating: 0xFF, count: 32)] {
            let members: [String: JSONValue] = ["kty": "OKP", "crv": "Ed25519", "x": .string(Base64URL.encode(point))]
            #expect(throws: JOSEError.invalidKey("invalid Ed25519 point")) { try JSONWebKey(members: members) }
        }
    }

    @Test func validatesRSAParameters() throws {
        let rsa = try TestKeys.rsa.get()
        // A leading zero byte (non-conforming but seen in the wild) is tolerated.
        let padded = rsa.jwk(kid: "p", extra: ["n": .string(Base64URL.encode([0] + rsa.publicA))])
        #expect(try JSONWebKey(members: padded) == rsa.publicKey(kid: "p"))
        var even = rsa.publicA
        even[even.count - 1] &= 0xFE
        #expect(throws: JOSEError.invalidKey("RSA modulus is even")) {
            try JSONWebKey(members: rsa.jwk(kid: "e", extra: ["n": .string(Base64URL.encode(even))]))
        }
        for exponent in ["AQ", "Ag", "AAE", "AQAAAAAAAAAB", "AQAB=", ""] {
            expectThrows({ (error: JOSEError) in ["invalidKey", "invalidBase64URL"].contains(error.kind) }, "\(exponent)") {
                try JSONWebKey(members: rsa.jwk(kid: "x", extra: ["e": .string(exponent)]))
            }
        }
        let tooLong = [UInt8](repeating: 0xFF, count: 1025)
        #expect(throws: JOSEError.invalidKey("RSA modulus longer than 8192 bits")) {
            try JSONWebKey(members: rsa.jwk(kid: "x", extra: ["n": .string(Base64URL.encode(tooLong))]))
        }
        expectThrows({ (error: JOSEError) in error.kind == "invalidKey" }) { try JSONWebKey(members: rsa.jwk(kid: "x", extra: ["n": 12])) }
    }

    @Test func rejectsMalformedOptionalMembers() throws {
        let ed = try TestKeys.ed25519.get()
        for extra: [String: JSONValue] in [["kid": 1], ["use": true], ["alg": nil], ["key_ops": "verify"], ["key_ops": [1]]] {
            expectThrows({ (error: JOSEError) in error.kind == "invalidKey" }, "\(extra)") { try JSONWebKey(members: ed.jwk(kid: nil, extra: extra)) }
        }
        let withOps = try JSONWebKey(members: ed.jwk(kid: "k", extra: ["key_ops": ["verify"]]))
        #expect(withOps.keyOperations == ["verify"])
        #expect(try JSONWebKey(json: TokenFactory.json(.object(ed.jwk(kid: "k")))).keyID == "k")
        expectThrows({ (error: JOSEError) in error.kind == "invalidKey" }) { try JSONWebKey(json: Data("[]".utf8)) }
    }

    @Test func ignoresPrivateMembers() throws {
        let ed = try TestKeys.ed25519.get()
        let withPrivate = try JSONWebKey(members: ed.jwk(kid: "k", extra: ["d": "c2VjcmV0"]))
        #expect(withPrivate == (try ed.publicKey(kid: "k")))
    }
}
