import COpenSSL
import CredentialVault

/// The one key of a keyring file: PBKDF2-HMAC-SHA256 of the application's secret (the portal's
/// 64 bytes, or a password) with the file's salt and iteration count, 16 bytes, in guarded
/// memory. The format uses it for AES-128-CBC and for every HMAC-SHA256 alike (a weakness of
/// the format, see SECURITY.md).
struct KeyringKey: Sendable {
    /// The derived key.
    let bytes: SecureBytes
    /// The salt it was derived with: a file with another salt needs another derivation.
    let salt: [UInt8]
    /// The iteration count it was derived with.
    let iterations: UInt32

    /// Derives the key (about 100,000 HMAC computations: tens of milliseconds; stores keep the
    /// result for as long as the file's salt stays the same). Throws `io` when OpenSSL fails.
    static func derive(from secret: SecureBytes, salt: [UInt8], iterations: UInt32) throws(CredentialVaultError) -> KeyringKey {
        let key = SecureBytes(count: KeyringFileLayout.keySize)
        let succeeded = secret.withUnsafeBytes { password in
            key.withUnsafeMutableBytes { output in
                salt.withUnsafeBufferPointer { saltBytes in
                    PKCS5_PBKDF2_HMAC(
                        password.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(password.count), saltBytes.baseAddress,
                        Int32(saltBytes.count), Int32(iterations), EVP_sha256(), Int32(output.count),
                        output.baseAddress?.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        guard succeeded == 1 else { throw .io("OpenSSL could not derive the keyring file's key (PBKDF2)") }
        return KeyringKey(bytes: key, salt: salt, iterations: iterations)
    }

    /// Whether this key is the one for a file with `salt` and `iterations`.
    func fits(salt: [UInt8], iterations: UInt32) -> Bool { self.iterations == iterations && self.salt == salt }
}
