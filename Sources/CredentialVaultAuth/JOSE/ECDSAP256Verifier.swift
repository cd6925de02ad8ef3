import COpenSSL
import Foundation

/// ES256: ECDSA on P-256 with SHA-256 (RFC 7518 section 3.4) through OpenSSL 3.
///
/// JOSE carries the signature as the fixed-length concatenation `r || s` (32 bytes each);
/// OpenSSL verifies DER `ECDSA-Sig-Value`. The conversion goes through `ECDSA_SIG` and
/// `i2d_ECDSA_SIG`, so DER is never assembled by hand, and any length other than 64 is
/// refused up front (a DER signature passed where raw is expected is simply invalid).
enum ECDSAP256Verifier {
    /// Runs `body` with the EVP_PKEY for the point (x, y) on P-256.
    private static func withKey<R>(x: Data, y: Data, body: (OpaquePointer) -> R) -> R? {
        guard x.count == 32, y.count == 32 else { return nil }
        let point = [UInt8(0x04)] + Array(x) + Array(y)  // SEC 1 uncompressed point
        // The builder and the OSSL_PARAM array keep pointers to parameter names and values
        // (copied only into the key by EVP_PKEY_fromdata), so every C string and buffer
        // stays alive across the whole construction.
        return OSSL_PKEY_PARAM_GROUP_NAME.withCString { groupName in
            OSSL_PKEY_PARAM_PUB_KEY.withCString { publicName in
                "prime256v1".withCString { group in
                    point.withUnsafeBytes { encoded in
                        OpenSSLKeys.withPublicKey(
                            type: "EC",
                            push: { builder in
                                OSSL_PARAM_BLD_push_utf8_string(builder, groupName, group, 0) == 1
                                    && OSSL_PARAM_BLD_push_octet_string(
                                        builder, publicName, encoded.baseAddress, encoded.count) == 1
                            },
                            body: body)
                    }
                }
            }
        }
    }

    /// Whether (x, y) is a valid public point on P-256: OpenSSL's full public-key check
    /// (on the curve, not the point at infinity, coordinates in range, correct order).
    /// Checking at JWKS parse time rules out invalid-curve tricks before any verification.
    static func isValidPublicKey(x: Data, y: Data) -> Bool {
        defer { ERR_clear_error() }
        let valid = withKey(x: x, y: y) { key -> Bool in
            guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { return false }
            defer { EVP_PKEY_CTX_free(context) }
            return EVP_PKEY_public_check(context) == 1
        }
        return valid ?? false
    }

    /// Verifies the 64-byte JOSE signature `r || s` over `message`.
    static func verify(x: Data, y: Data, signature: Data, message: Data) -> Bool {
        defer { ERR_clear_error() }
        guard signature.count == 64, let der = derSignature(raw: Array(signature)) else { return false }
        let valid = withKey(x: x, y: y) { key in
            OpenSSLKeys.digestVerify(key: key, rsaPKCS1: false, signature: der, message: message)
        }
        return valid ?? false
    }

    /// DER-encodes `r || s` (32 bytes each) as an `ECDSA-Sig-Value`.
    static func derSignature(raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        guard let r = OpenSSLKeys.bignum(raw[0..<32]) else { return nil }
        guard let s = OpenSSLKeys.bignum(raw[32..<64]) else {
            BN_free(r)
            return nil
        }
        // On success ECDSA_SIG_set0 takes ownership of r and s (freed with `signature`).
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        // Two INTEGERs of at most 33 bytes plus headers: never more than 72 bytes.
        guard length > 0, length <= 80 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
    }
}
