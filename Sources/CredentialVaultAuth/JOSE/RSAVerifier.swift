import COpenSSL
import Foundation

/// RS256: RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 section 3.3) through OpenSSL 3.
enum RSAVerifier {
    /// Verifies `signature` over `message` with the public key (`modulus`, `exponent`),
    /// both big-endian without leading zeros. Any failure, including an OpenSSL error,
    /// returns `false`.
    static func verify(modulus: Data, exponent: Data, signature: Data, message: Data) -> Bool {
        // OpenSSL's error queue is per thread; leave it empty whatever happened so that
        // stale errors never confuse later, unrelated OpenSSL calls.
        defer { ERR_clear_error() }
        // A PKCS#1 v1.5 signature is exactly as long as the modulus (RFC 8017 8.2.2 step 1).
        guard signature.count == modulus.count else { return false }
        guard let n = OpenSSLKeys.bignum(modulus) else { return false }
        defer { BN_free(n) }
        guard let e = OpenSSLKeys.bignum(exponent) else { return false }
        defer { BN_free(e) }
        // The builder and the OSSL_PARAM array it produces keep pointers to the parameter
        // names (not copies), so the C strings must outlive the whole key construction.
        let result = OSSL_PKEY_PARAM_RSA_N.withCString { nName in
            OSSL_PKEY_PARAM_RSA_E.withCString { eName in
                OpenSSLKeys.withPublicKey(
                    type: "RSA",
                    push: { builder in
                        OSSL_PARAM_BLD_push_BN(builder, nName, n) == 1 && OSSL_PARAM_BLD_push_BN(builder, eName, e) == 1
                    },
                    body: { key -> Bool in
                        // Re-check the size OpenSSL sees: the JWK parser already refused short
                        // keys; this keeps the rule true for any future caller.
                        guard EVP_PKEY_get_bits(key) >= JSONWebKey.minimumRSAModulusBits else { return false }
                        return OpenSSLKeys.digestVerify(
                            key: key, rsaPKCS1: true, signature: Array(signature), message: message)
                    })
            }
        }
        return result ?? false
    }
}
