// libFuzzer target for the JOSE layer (JWT/JWS parsing, JWKS/JWK parsing with OpenSSL key
// import, ID-token validation), linked by scripts/fuzz/build.sh against the auth module built
// once for every target (with -enable-testing, so that its internal parsers are reachable).
// Each input is tried as:
//   1. a compact JWT: parsed, verified against the RFC 7515/8037 example keys, validated as
//      an ID token (issuer "joe", any client);
//   2. a JWKS document: every key imported (RSA modulus/exponent, P-256 point, Ed25519 key
//      from hostile bytes) and used to verify the RFC example tokens;
//   3. a JSON document (the strict parser on its own).
// Errors are fine; a crash, a trap, a leak or a hang is a finding.
@testable import CredentialVault
@testable import CredentialVaultAuth
import Foundation

private let joePayload = "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
private let exampleTokens = [
    // RFC 7515 A.2 (RS256), A.3 (ES256); RFC 8037 A.4 (EdDSA, not a JWT payload).
    "eyJhbGciOiJSUzI1NiJ9.\(joePayload).cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw",
    "eyJhbGciOiJFUzI1NiJ9.\(joePayload).DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q",
    "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg",
]
private let exampleKeySet = #"""
    {"keys":[
    {"kty":"RSA","kid":"rsa","n":"ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ","e":"AQAB"},
    {"kty":"EC","kid":"ec","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
    {"kty":"OKP","kid":"ed","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
    ]}
    """#

/// Built per input: Swift keeps `Data` references with tag bits in enum payloads, which
/// LeakSanitizer does not recognise as pointers, so long-lived parsed values in globals read
/// as leaks at exit; per-input values are freed and any real leak still shows.
private func exampleKeySetParsed() -> JSONWebKeySet { try! JSONWebKeySet(json: Data(exampleKeySet.utf8)) }
private let validatorClock = ManualClock(start: Date(timeIntervalSince1970: 1_300_819_000))

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    writeSeedsIfAsked(exampleTokens.enumerated().map { ("token-\($0)", $1) } + [("jwks", exampleKeySet)])
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Data(bytes: data, count: size)
    let examples = exampleKeySetParsed()
    let signatures = exampleTokens.compactMap { try? JSONWebSignature(compactSerialization: $0) }
    if let token = try? JSONWebToken(compactSerialization: input) {
        _ = try? token.jws.verify(using: examples)
        let validator = IDTokenValidator(issuer: "joe", clientID: "client", clock: validatorClock)
        _ = try? validator.validate(token, keySet: examples, nonce: nil)
        _ = "\(token)"
    }
    if let keySet = try? JSONWebKeySet(json: input) {
        for signature in signatures { _ = try? signature.verify(using: keySet) }
        for key in keySet.keys {
            for signature in signatures { _ = try? signature.verify(with: key) }
        }
    }
    _ = try? JSONValue.parse(input)
    return 0
}
