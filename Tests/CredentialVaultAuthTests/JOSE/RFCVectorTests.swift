import CredentialVaultAuth
import Foundation
import CredentialVaultTestSupport
import Testing

/// Published test vectors, verified through the public API.
@Suite("RFC test vectors", .ownThread)
struct RFCVectorTests {
    /// RFC 7515 appendix A.2 and A.3 share this payload:
    /// {"iss":"joe",\r\n "exp":1300819380,\r\n "http://example.com/is_root":true}
    static let joePayload = "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"

    /// RFC 7515 A.2: RS256.
    static let a2Modulus =
        "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
    static let a2Token =
        "eyJhbGciOiJSUzI1NiJ9.\(joePayload).cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"

    /// RFC 7515 A.3: ES256 (the example's signature verifies; signing is randomised).
    static let a3Key: [String: JSONValue] = [
        "kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
        "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
    ]
    static let a3Token =
        "eyJhbGciOiJFUzI1NiJ9.\(joePayload).DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"

    /// RFC 8037 A.1 / A.4: Ed25519 over the text "Example of Ed25519 signing".
    static let edKey: [String: JSONValue] = [
        "kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
    ]
    static let edToken =
        "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg"

    @Test func rfc7515A2RS256() throws {
        let key = try JSONWebKey(members: ["kty": "RSA", "n": .string(Self.a2Modulus), "e": "AQAB"])
        let token = try JSONWebToken(compactSerialization: Self.a2Token)
        try token.jws.verify(with: key)
        #expect(token.claims["iss"] == "joe")
        #expect(token.claims["exp"] == 1_300_819_380)
        #expect(token.claims["http://example.com/is_root"] == true)
        // One flipped bit anywhere in the signature, the header or the payload fails.
        #expect(throws: JOSEError.badSignature) {
            try JSONWebSignature(compactSerialization: TokenFactory.replacingSegment(
                Self.a2Token, 1, with: Base64URL.encode(Data(#"{"iss":"joe"}"#.utf8)))).verify(with: key)
        }
        var signature = token.signature
        signature[0] ^= 0x80
        #expect(throws: JOSEError.badSignature) {
            try key.verify(signature: signature, signingInput: token.signingInput, algorithm: .rs256)
        }
    }

    @Test func rfc7515A3ES256() throws {
        let key = try JSONWebKey(members: Self.a3Key)
        let token = try JSONWebToken(compactSerialization: Self.a3Token)
        try token.jws.verify(with: key)
        #expect(token.claims["iss"] == "joe")
        var signature = token.signature
        signature[63] ^= 0x01
        #expect(throws: JOSEError.badSignature) {
            try key.verify(signature: signature, signingInput: token.signingInput, algorithm: .es256)
        }
    }

    @Test func rfc8037A4Ed25519() throws {
        let key = try JSONWebKey(members: Self.edKey)
        let jws = try JSONWebSignature(compactSerialization: Self.edToken)
        try jws.verify(with: key)
        #expect(jws.payload == Data("Example of Ed25519 signing".utf8))
        // The payload is not a claims set, so it is not a JWT.
        #expect(throws: JOSEError.malformedToken("claims are not valid JSON")) {
            try JSONWebToken(compactSerialization: Self.edToken)
        }
        var signature = jws.signature
        signature[10] ^= 0x04
        #expect(throws: JOSEError.badSignature) {
            try key.verify(signature: signature, signingInput: jws.signingInput, algorithm: .edDSA)
        }
    }

    /// RFC 7515 A.1 is HS256: well-formed, but HMAC is never accepted.
    @Test func rfc7515A1HS256IsRefused() throws {
        let hs256 =
            "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.\(Self.joePayload).dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let token = try JSONWebToken(compactSerialization: hs256)
        let keySet = JSONWebKeySet(keys: [try JSONWebKey(members: Self.a3Key)])
        #expect(throws: JOSEError.unsupportedAlgorithm("HS256")) { try token.jws.verify(using: keySet) }
    }
}
