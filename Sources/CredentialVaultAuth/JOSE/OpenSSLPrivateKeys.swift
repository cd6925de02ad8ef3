import COpenSSL
import CredentialVault
import Foundation

/// Builds, generates and inspects OpenSSL private keys for `JWSSigningKey`. Every function
/// returns either an `EVP_PKEY` the caller owns (and frees) or plain public values; OpenSSL's
/// per-thread error queue is cleared before returning, whatever happened.
enum OpenSSLPrivateKeys {
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

    /// A BIGNUM flagged secure (cleared when freed) holding the big-endian `bytes`; the caller
    /// frees it with `BN_clear_free`. `nil` for no bytes.
    static func secureBignum(_ bytes: UnsafeRawBufferPointer) -> OpaquePointer? {
        defer { ERR_clear_error() }
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty, bytes.count <= Int(Int32.max),
            let number = BN_secure_new()
        else { return nil }
        guard BN_bin2bn(base, Int32(bytes.count), number) != nil else {
            BN_clear_free(number)
            return nil
        }
        return number
    }

    /// A P-256 key pair from its private value and its uncompressed public point
    /// (`04 || x || y`); refused unless the two agree.
    static func ecP256(d: OpaquePointer, publicPoint: UnsafeRawBufferPointer) -> OpaquePointer? {
        guard publicPoint.count == 65, publicPoint[0] == 0x04 else { return nil }
        // Parameter names and values must outlive the whole construction (see OpenSSLKeys).
        return OSSL_PKEY_PARAM_GROUP_NAME.withCString { groupName in
            OSSL_PKEY_PARAM_PUB_KEY.withCString { publicName in
                OSSL_PKEY_PARAM_PRIV_KEY.withCString { privateName in
                    "prime256v1".withCString { group in
                        keyPair(type: "EC") { builder in
                            OSSL_PARAM_BLD_push_utf8_string(builder, groupName, group, 0) == 1
                                && OSSL_PARAM_BLD_push_octet_string(builder, publicName, publicPoint.baseAddress, publicPoint.count) == 1
                                && OSSL_PARAM_BLD_push_BN(builder, privateName, d) == 1
                        }
                    }
                }
            }
        }
    }

    /// The uncompressed public point (`04 || x || y`) of the P-256 private value `d`, for a
    /// SEC1 key that leaves it out; `nil` for a value that gives no point (zero).
    static func p256PublicPoint(of d: OpaquePointer) -> [UInt8]? {
        defer { ERR_clear_error() }
        guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else { return nil }
        defer { EC_GROUP_free(group) }
        guard let point = EC_POINT_new(group) else { return nil }
        defer { EC_POINT_free(point) }
        // A secure context: its temporaries hold multiples of the private value.
        guard let context = BN_CTX_secure_new() else { return nil }
        defer { BN_CTX_free(context) }
        guard EC_POINT_mul(group, point, d, nil, nil, context) == 1 else { return nil }
        var encoded = [UInt8](repeating: 0, count: 65)
        let written = encoded.withUnsafeMutableBufferPointer {
            EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, $0.baseAddress, 65, context)
        }
        return written == 65 ? encoded : nil
    }

    /// An RSA key pair from `n, e, d, p, q, dp, dq, qi` (in that order); refused unless they
    /// form a valid key.
    static func rsa(_ numbers: [OpaquePointer]) -> OpaquePointer? {
        // OSSL_PKEY_PARAM_RSA_FACTOR1 and the others are macros pasted from two strings, which
        // Swift does not import: their values, spelled out.
        let names = [
            OSSL_PKEY_PARAM_RSA_N, OSSL_PKEY_PARAM_RSA_E, OSSL_PKEY_PARAM_RSA_D, "rsa-factor1", "rsa-factor2",
            "rsa-exponent1", "rsa-exponent2", "rsa-coefficient1",
        ]
        guard numbers.count == names.count else { return nil }
        // OpenSSL keeps pointers to the names until the key is built: keep C copies alive.
        let cNames = names.map { strdup($0) }
        defer { cNames.forEach { free($0) } }
        return keyPair(type: "RSA") { builder in
            zip(cNames, numbers).allSatisfy { name, number in
                guard let name else { return false }
                return OSSL_PARAM_BLD_push_BN(builder, name, number) == 1
            }
        }
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
