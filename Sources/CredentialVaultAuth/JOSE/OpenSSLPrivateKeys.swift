import COpenSSL
import CredentialVault
import Foundation

/// Builds, generates and inspects OpenSSL private keys for `JWSSigningKey`. Every function
/// returns either an `EVP_PKEY` the caller owns (and frees) or plain public values; OpenSSL's
/// per-thread error queue is cleared before returning, whatever happened.
enum OpenSSLPrivateKeys {
    /// A private key read from PEM text (PKCS#8 `PRIVATE KEY`, `EC PRIVATE KEY` or
    /// `RSA PRIVATE KEY`). An encrypted PEM is refused rather than prompting for a
    /// passphrase on the terminal, which is what OpenSSL's default callback would do.
    /// Refused unless its halves agree (`checked`): OpenSSL reads an `EC PRIVATE KEY` whose
    /// public point is another key's, or whose scalar is not below the group order, as it is.
    static func fromPEM(_ pem: UnsafeRawBufferPointer) -> OpaquePointer? {
        defer { ERR_clear_error() }
        guard let base = pem.baseAddress, pem.count > 0, pem.count <= Int(Int32.max) else { return nil }
        // A read-only BIO over the caller's guarded buffer: OpenSSL makes no copy of the PEM.
        guard let bio = BIO_new_mem_buf(base, Int32(pem.count)) else { return nil }
        defer { BIO_free(bio) }
        return checked(PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil))
    }

    /// A new key for `algorithm`: P-256, RSA 2048 bits or Ed25519.
    static func generate(_ algorithm: JWSAlgorithm) -> OpaquePointer? {
        defer { ERR_clear_error() }
        let type = switch algorithm {
        case .es256: "EC"
        case .rs256: "RSA"
        case .edDSA: "ED25519"
        }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { return nil }
        switch algorithm {
        case .es256: guard EVP_PKEY_CTX_set_group_name(context, "P-256") == 1 else { return nil }
        case .rs256: guard EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048) == 1 else { return nil }
        case .edDSA: break
        }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1 else {
            EVP_PKEY_free(key)
            return nil
        }
        return key
    }

    /// An Ed25519 key from its 32-byte private seed (JWK `d`).
    static func ed25519(seed: UnsafeRawBufferPointer) -> OpaquePointer? {
        defer { ERR_clear_error() }
        guard seed.count == 32, let base = seed.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        return EVP_PKEY_new_raw_private_key_ex(nil, "ED25519", nil, base, 32)
    }

    /// A key pair of `type` ("EC" or "RSA") from the parameters `push` adds; refused unless
    /// OpenSSL's key checks pass (`checked`).
    static func keyPair(type: String, push: (OpaquePointer) -> Bool) -> OpaquePointer? {
        defer { ERR_clear_error() }
        return checked(OpenSSLKeys.key(type: type, selection: cv_evp_pkey_keypair_selection(), push: push))
    }

    /// `key` when OpenSSL's checks pass (the public half is valid and is the private half's,
    /// the private value in range); otherwise frees it and returns nil.
    private static func checked(_ key: OpaquePointer?) -> OpaquePointer? {
        guard let key else { return nil }
        guard let check = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            EVP_PKEY_free(key)
            return nil
        }
        defer { EVP_PKEY_CTX_free(check) }
        guard EVP_PKEY_pairwise_check(check) == 1, EVP_PKEY_public_check(check) == 1 else {
            EVP_PKEY_free(key)
            return nil
        }
        return key
    }

    /// A BIGNUM parameter of `key` as big-endian bytes, left-padded to `size` when given.
    static func bignumParameter(_ key: OpaquePointer, _ name: String, size: Int? = nil) -> Data? {
        defer { ERR_clear_error() }
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else { return nil }
        defer { BN_free(number) }
        let length = size ?? Int((BN_num_bits(number) + 7) / 8)
        guard length > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: length)
        let written = bytes.withUnsafeMutableBufferPointer { BN_bn2binpad(number, $0.baseAddress, Int32(length)) }
        return written == Int32(length) ? Data(bytes) : nil
    }

    /// A UTF-8 string parameter of `key` (the EC group name).
    static func stringParameter(_ key: OpaquePointer, _ name: String) -> String? {
        defer { ERR_clear_error() }
        var buffer = [CChar](repeating: 0, count: 64)
        var length = 0
        let found = buffer.withUnsafeMutableBufferPointer {
            EVP_PKEY_get_utf8_string_param(key, name, $0.baseAddress, $0.count, &length) == 1
        }
        guard found, length < buffer.count else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The 32-byte raw public key of an Ed25519 key.
    static func rawPublicKey(_ key: OpaquePointer) -> Data? {
        defer { ERR_clear_error() }
        var bytes = [UInt8](repeating: 0, count: 32)
        var length = bytes.count
        guard bytes.withUnsafeMutableBufferPointer({ EVP_PKEY_get_raw_public_key(key, $0.baseAddress, &length) }) == 1,
            length == 32
        else { return nil }
        return Data(bytes)
    }

    /// Signs `message` with `key`: SHA-256 (`digest` true) with PKCS#1 v1.5 padding for RSA,
    /// or EdDSA's own one-shot signing (`digest` false). ECDSA comes back as DER.
    static func sign(_ key: OpaquePointer, digest: Bool, rsaPKCS1: Bool, message: Data) -> [UInt8]? {
        defer { ERR_clear_error() }
        guard let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        // The EVP_PKEY_CTX belongs to the digest context: not freed here.
        var keyContext: OpaquePointer?
        guard EVP_DigestSignInit_ex(context, &keyContext, digest ? "SHA256" : nil, nil, nil, key, nil) == 1 else {
            return nil
        }
        if rsaPKCS1 {
            guard let keyContext, EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PADDING) == 1 else { return nil }
        }
        // Never hand OpenSSL a null pointer, even for an empty message.
        let messageBytes = message.isEmpty ? [UInt8(0)] : Array(message)
        let messageLength = message.count
        return messageBytes.withUnsafeBufferPointer { input -> [UInt8]? in
            var length = 0
            guard EVP_DigestSign(context, nil, &length, input.baseAddress, messageLength) == 1,
                length > 0, length <= 1024
            else { return nil }
            var signature = [UInt8](repeating: 0, count: length)
            let signed = signature.withUnsafeMutableBufferPointer {
                EVP_DigestSign(context, $0.baseAddress, &length, input.baseAddress, messageLength)
            }
            guard signed == 1, length <= signature.count else { return nil }
            return Array(signature[..<length])
        }
    }

    /// HMAC-SHA-256 of `message` under `secret` (client_secret_jwt's HS256).
    static func hmacSHA256(secret: UnsafeRawBufferPointer, message: Data) -> [UInt8]? {
        defer { ERR_clear_error() }
        // An empty shared secret authenticates nothing: refused rather than MACed.
        guard let keyBytes = secret.baseAddress, !secret.isEmpty, secret.count <= Int(Int32.max) else { return nil }
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let messageBytes = message.isEmpty ? [UInt8(0)] : Array(message)
        let done = messageBytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                HMAC(EVP_sha256(), keyBytes, Int32(secret.count), input.baseAddress, message.count, out.baseAddress, &length) != nil
            }
        }
        return done && length == 32 ? output : nil
    }
}
