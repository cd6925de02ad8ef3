import COpenSSL
import CredentialVault

/// AES-128-CBC with PKCS#7 padding through OpenSSL's EVP interface: what encrypts an item's
/// plaintext in the keyring file.
enum ItemCipher {
    /// Encrypts `plaintext` with `iv` (16 random bytes). The ciphertext is one to sixteen bytes
    /// longer than the plaintext (the padding). Throws `io` when OpenSSL fails.
    static func encrypt(_ plaintext: UnsafeRawBufferPointer, key: KeyringKey, iv: [UInt8]) throws(CredentialVaultError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: plaintext.count + KeyringFileLayout.blockSize)
        let written = output.withUnsafeMutableBytes { out in
            run(encrypting: true, key: key, iv: iv, input: plaintext, output: out)
        }
        guard let written else { throw .io("OpenSSL could not encrypt an item of the keyring file") }
        output.removeLast(output.count - written)
        return output
    }

    /// Decrypts `ciphertext` (a multiple of the block size, checked by the caller) into guarded
    /// memory, 16-byte aligned, and returns it with the plaintext's length. Throws `corrupted` when the padding is not PKCS#7: call it only once the item's
    /// MAC is verified, so that this tells nothing about data an attacker made.
    static func decrypt(
        _ ciphertext: UnsafeRawBufferPointer, key: KeyringKey, iv: UnsafeRawBufferPointer
    ) throws(CredentialVaultError) -> (plaintext: SecureBytes, count: Int) {
        // Room for a block more than the input, as EVP asks; a multiple of 16 either way, so
        // sodium_malloc's start (which ends the region at a page boundary) is aligned for GLib.
        let output = SecureBytes(count: ciphertext.count + KeyringFileLayout.blockSize)
        let written = output.withUnsafeMutableBytes { out in
            run(encrypting: false, key: key, iv: Array(iv), input: ciphertext, output: out)
        }
        guard let written else { throw .corrupted("an item of the keyring file has invalid padding") }
        return (output, written)
    }

    /// One whole EVP run; the number of bytes written, or `nil` when OpenSSL refused (a bad
    /// padding when decrypting).
    private static func run(
        encrypting: Bool, key: KeyringKey, iv: [UInt8], input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer
    ) -> Int? {
        guard iv.count == KeyringFileLayout.blockSize, let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        let initialised = key.bytes.withUnsafeBytes { keyBytes in
            EVP_CipherInit_ex(
                context, EVP_aes_128_cbc(), nil, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), iv, encrypting ? 1 : 0)
        }
        guard initialised == 1 else { return nil }
        let out = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var first: Int32 = 0
        var last: Int32 = 0
        guard EVP_CipherUpdate(context, out, &first, input.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(input.count)) == 1,
            EVP_CipherFinal_ex(context, out.map { $0 + Int(first) }, &last) == 1
        else { return nil }
        return Int(first) + Int(last)
    }
}
