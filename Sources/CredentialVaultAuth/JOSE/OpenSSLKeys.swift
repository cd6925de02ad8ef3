import COpenSSL
import Foundation

/// Scoped helpers over OpenSSL 3's EVP API. Every OpenSSL object created here is freed by a
/// `defer` in the function that created it, on every path, and nothing OpenSSL-owned escapes
/// a closure. OpenSSL 3 initialises itself on first use (thread-safely) and all objects here
/// are per call, so concurrent verifications share no mutable state.
enum OpenSSLKeys {
    /// Runs `body` with a public `EVP_PKEY` of `type` ("RSA" or "EC") built from the
    /// parameters `push` adds to an `OSSL_PARAM_BLD`.
    ///
    /// The builder keeps pointers to what is pushed (BIGNUMs, buffers, and the parameter
    /// *names*, which even the resulting OSSL_PARAM array references) until the key is
    /// built, which happens inside this call. Callers therefore push only names, buffers and
    /// BIGNUMs that are alive for the whole call: they call this from inside their own
    /// `withCString` / `withUnsafeBytes` / `defer BN_free` scopes. (A Swift String passed
    /// directly as `const char *` would be a temporary freed when the push call returns.)
    /// - Returns: `body`'s result, or `nil` if OpenSSL could not build the key.
    static func withPublicKey<R>(
        type: String, push: (OpaquePointer) -> Bool, body: (OpaquePointer) -> R
    ) -> R? {
        guard let key = key(type: type, selection: cv_evp_pkey_public_key_selection(), push: push) else { return nil }
        defer { EVP_PKEY_free(key) }
        return body(key)
    }

    /// A new `EVP_PKEY` of `type` holding the `selection` (public key, or key pair) of the
    /// parameters `push` adds (see `withPublicKey` for what may be pushed); the caller frees it.
    static func key(type: String, selection: Int32, push: (OpaquePointer) -> Bool) -> OpaquePointer? {
        guard let builder = OSSL_PARAM_BLD_new() else { return nil }
        defer { OSSL_PARAM_BLD_free(builder) }
        guard push(builder), let params = OSSL_PARAM_BLD_to_param(builder) else { return nil }
        // OpenSSL 3.0 has no clearing free for parameter arrays; the copies of private values
        // made from BIGNUMs flagged secure (see `JWSSigningKey`) are cleared by OpenSSL itself.
        defer { OSSL_PARAM_free(params) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_fromdata_init(context) == 1 else { return nil }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata(context, &key, selection, params) == 1, let key else {
            EVP_PKEY_free(key)
            return nil
        }
        return key
    }

    /// A new BIGNUM holding the big-endian unsigned integer `bytes`; the caller frees it.
    static func bignum<Bytes: DataProtocol>(_ bytes: Bytes) -> OpaquePointer? {
        let array = Array(bytes)
        guard !array.isEmpty, array.count <= Int(Int32.max) else { return nil }
        return array.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            return BN_bin2bn(base, Int32(buffer.count), nil)
        }
    }

    /// `EVP_DigestVerify` with SHA-256. `rsaPKCS1` pins RSASSA-PKCS1-v1_5 padding explicitly
    /// rather than relying on the provider's default, so PSS can never be negotiated.
    /// Only a return value of exactly 1 is success: 0 is a bad signature and negative values
    /// are errors, both treated as failure (fail closed).
    static func digestVerify(key: OpaquePointer, rsaPKCS1: Bool, signature: [UInt8], message: Data) -> Bool {
        guard let digestContext = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(digestContext) }
        // The EVP_PKEY_CTX returned here belongs to the digest context: not freed by us.
        var keyContext: OpaquePointer?
        guard EVP_DigestVerifyInit_ex(digestContext, &keyContext, "SHA256", nil, nil, key, nil) == 1 else {
            return false
        }
        if rsaPKCS1 {
            guard let keyContext, EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PADDING) == 1 else {
                return false
            }
        }
        // Never hand OpenSSL a null pointer, even for an empty message.
        let messageBytes = message.isEmpty ? [UInt8(0)] : Array(message)
        let messageLength = message.count
        return signature.withUnsafeBufferPointer { sig in
            messageBytes.withUnsafeBufferPointer { msg in
                guard let sigBase = sig.baseAddress, let msgBase = msg.baseAddress else { return false }
                return EVP_DigestVerify(digestContext, sigBase, sig.count, msgBase, messageLength) == 1
            }
        }
    }
}
