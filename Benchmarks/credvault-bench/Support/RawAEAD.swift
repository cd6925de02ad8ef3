import CSodium

/// The raw libsodium counterpart of `SealingKey.seal`/`open`: the same
/// `crypto_aead_xchacha20poly1305_ietf_encrypt/decrypt` calls with a random nonce
/// (`randombytes_buf`), the same `nonce || ciphertext || tag` layout, into buffers allocated
/// once up front.
final class RawAEAD {
    private static let nonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_npubbytes())
    private static let tagBytes = Int(crypto_aead_xchacha20poly1305_ietf_abytes())

    let size: Int
    private let key = UnsafeMutablePointer<UInt8>.allocate(capacity: 32)
    private let plaintext: UnsafeMutablePointer<UInt8>
    private let box: UnsafeMutablePointer<UInt8>
    private let opened: UnsafeMutablePointer<UInt8>

    init(size: Int) {
        precondition(sodium_init() >= 0)
        self.size = size
        plaintext = .allocate(capacity: max(size, 1))
        box = .allocate(capacity: size + Self.nonceBytes + Self.tagBytes)
        opened = .allocate(capacity: max(size, 1))
        randombytes_buf(key, 32)
        randombytes_buf(plaintext, size)
        seal()
    }

    deinit {
        key.deallocate()
        plaintext.deallocate()
        box.deallocate()
        opened.deallocate()
    }

    /// Seals the plaintext into the box with a fresh random nonce.
    func seal() {
        randombytes_buf(box, Self.nonceBytes)
        var written: UInt64 = 0
        _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
            box + Self.nonceBytes, &written, plaintext, UInt64(size), nil, 0, nil, box, key)
    }

    /// Opens the box; `false` if it does not authenticate.
    func open() -> Bool {
        var written: UInt64 = 0
        return crypto_aead_xchacha20poly1305_ietf_decrypt(
            opened, &written, nil, box + Self.nonceBytes, UInt64(size + Self.tagBytes), nil, 0, box, key) == 0
    }
}

/// The raw libsodium counterpart of a passphrase unlock's key derivation: one `crypto_pwhash`
/// (Argon2id v1.3) with the preset's parameters.
enum RawArgon2id {
    static func derive(opsLimit: UInt64, memLimitBytes: UInt64) -> Bool {
        var out = [UInt8](repeating: 0, count: 32)
        var salt = [UInt8](repeating: 0, count: Int(crypto_pwhash_argon2id_saltbytes()))
        randombytes_buf(&salt, salt.count)
        let passphrase = Array("correct horse battery staple".utf8CString.dropLast())
        return passphrase.withUnsafeBufferPointer { pw in
            crypto_pwhash(
                &out, 32, pw.baseAddress!, UInt64(pw.count), salt, opsLimit, Int(memLimitBytes),
                crypto_pwhash_ALG_ARGON2ID13) == 0
        }
    }
}
