import COpenSSL
import CredentialVault

/// HMAC-SHA256 with the keyring's key (OpenSSL's `EVP_Q_mac`): of an attribute value (what the
/// file stores instead of the value) and of an item's ciphertext and IV (its integrity).
enum KeyringMAC {
    /// The 32-byte HMAC of `data`. Throws `io` when OpenSSL fails.
    static func compute(_ data: UnsafeRawBufferPointer, key: KeyringKey) throws(CredentialVaultError) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: KeyringFileLayout.macSize)
        var length = 0
        let result = key.bytes.withUnsafeBytes { keyBytes in
            mac.withUnsafeMutableBufferPointer { output in
                EVP_Q_mac(
                    nil, "HMAC", nil, "SHA256", nil, keyBytes.baseAddress, keyBytes.count, data.baseAddress, data.count,
                    output.baseAddress, output.count, &length)
            }
        }
        guard result != nil, length == KeyringFileLayout.macSize else { throw .io("OpenSSL could not compute an HMAC-SHA256") }
        return mac
    }

    /// The HMAC of an attribute value (its UTF-8 bytes, without a terminating NUL, as libsecret).
    static func compute(value: String, key: KeyringKey) throws(CredentialVaultError) -> [UInt8] {
        try Array(value.utf8).withRawBytes { (bytes) throws(CredentialVaultError) in try compute(bytes, key: key) }
    }

    /// Whether `expected` is the HMAC of `data`, compared in constant time.
    static func verify(_ data: UnsafeRawBufferPointer, key: KeyringKey, expected: [UInt8]) throws(CredentialVaultError) -> Bool {
        constantTimeEquals(try compute(data, key: key), expected)
    }
}
