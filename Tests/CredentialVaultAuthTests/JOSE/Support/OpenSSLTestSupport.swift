import COpenSSL
import Foundation

/// OpenSSL 3 key generation and signing for the tests (the library itself only verifies).
enum OpenSSLTestSupport {
    /// Generates a key of `algorithm`; `configure` sets size or curve. The caller frees it.
    static func generate(_ algorithm: String, configure: (OpaquePointer) -> Int32) throws -> OpaquePointer {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else { throw TestKeyError("ctx") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1, configure(context) == 1 else { throw TestKeyError("keygen init") }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1, let key else { throw TestKeyError("keygen") }
        return key
    }

    /// The private key in OpenSSL's DER form.
    static func privateDER(_ key: OpaquePointer) throws -> [UInt8] {
        let length = i2d_PrivateKey(key, nil)
        guard length > 0 else { throw TestKeyError("i2d_PrivateKey") }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PrivateKey(key, &cursor)
        }
        guard written == length else { throw TestKeyError("i2d_PrivateKey") }
        return out
    }

    /// A BIGNUM key parameter ("n", "e", "qx", "qy") as big-endian bytes.
    static func bignumParameter(_ key: OpaquePointer, _ name: String, padTo: Int?) throws -> [UInt8] {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else { throw TestKeyError("get \(name)") }
        defer { BN_free(number) }
        let size = padTo ?? Int((BN_num_bits(number) + 7) / 8)
        var out = [UInt8](repeating: 0, count: size)
        guard BN_bn2binpad(number, &out, Int32(size)) == Int32(size) else { throw TestKeyError("bn2bin") }
        return out
    }

    /// Signs with SHA-256 (PKCS#1 v1.5 for RSA, DER ECDSA for EC).
    static func sign(der: [UInt8], message: Data) throws -> [UInt8] {
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        guard let key else { throw TestKeyError("d2i") }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { throw TestKeyError("md ctx") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit_ex(context, nil, "SHA256", nil, nil, key, nil) == 1 else { throw TestKeyError("sign init") }
        let bytes = Array(message)
        var length = 0
        guard EVP_DigestSign(context, nil, &length, bytes, bytes.count) == 1 else { throw TestKeyError("sign size") }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, bytes, bytes.count) == 1 else { throw TestKeyError("sign") }
        return Array(signature.prefix(length))
    }

    /// Converts a DER ECDSA signature to the JOSE form r || s (32 bytes each).
    static func rawECDSA(der: [UInt8]) throws -> [UInt8] {
        let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature else { throw TestKeyError("d2i_ECDSA_SIG") }
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)
        var out = [UInt8](repeating: 0, count: 64)
        guard let r, let s else { throw TestKeyError("ECDSA_SIG_get0") }
        let okR = out.withUnsafeMutableBufferPointer { BN_bn2binpad(r, $0.baseAddress, 32) == 32 }
        let okS = out.withUnsafeMutableBufferPointer { BN_bn2binpad(s, $0.baseAddress! + 32, 32) == 32 }
        guard okR, okS else { throw TestKeyError("bn2binpad") }
        return out
    }
}
