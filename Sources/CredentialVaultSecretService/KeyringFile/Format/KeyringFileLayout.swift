/// The fixed parts of libsecret's keyring file (`keyrings/default.keyring`, the format of
/// libsecret's file backend, which oo7 shares), as libsecret's `secret-file-collection.c`
/// reads and writes them, and the bounds this reader puts on what it accepts.
///
/// A file is the 16-byte `header`, the two version bytes 1 and 0, then one little-endian
/// GVariant of type `fileType`: salt size, salt, PBKDF2 iteration count, modification time
/// (seconds since 1970), a usage counter, and the items. Each item is its attributes, names in
/// clear and values as HMAC-SHA256 (32 bytes), and one blob: the AES-128-CBC ciphertext
/// (PKCS#7 padded) of a GVariant of type `itemType`, then its 16-byte IV, then an HMAC-SHA256
/// (32 bytes) of ciphertext and IV. One 16-byte key, PBKDF2-HMAC-SHA256 of the app's secret,
/// serves AES and both HMACs.
enum KeyringFileLayout {
    /// `GnomeKeyring\n\r\0\n`.
    static let header: [UInt8] = Array("GnomeKeyring\n\r".utf8) + [0, 0x0A]
    /// The version bytes after the header: 1.0 (0.x is gnome-keyring's older, other format).
    static let version: [UInt8] = [1, 0]
    /// Header and version: where the GVariant starts.
    static let prefixCount = header.count + version.count

    /// The file's GVariant: `(salt size, salt, iterations, modified, usage, items)`.
    static let fileType = "(uayutua(a{say}ay))"
    /// One item's array element: hashed attributes and the encrypted blob.
    static let encryptedItemType = "(a{say}ay)"
    /// The plaintext of one item: `(attributes, label, created, modified, secret)`.
    static let itemType = "(a{ss}sttay)"

    /// AES block and IV size.
    static let blockSize = 16
    /// The AES-128 key, and so the PBKDF2 output.
    static let keySize = 16
    /// The HMAC-SHA256 of an attribute value or of an item's ciphertext and IV.
    static let macSize = 32

    /// The salt a new file gets (libsecret's and oo7's size).
    static let saltSize = 32
    /// The PBKDF2 iterations a new file gets (libsecret's and oo7's count).
    static let iterations: UInt32 = 100_000

    /// The fewest iterations accepted, as oo7 does: a file claiming fewer is refused rather than
    /// read and then written back with a key easier to guess.
    static let minimumIterations: UInt32 = 100_000
    /// The most iterations accepted: about a second's work per million here, so a hostile
    /// count cannot make an operation run for hours.
    static let maximumIterations: UInt32 = 10_000_000
    /// The smallest salt accepted (what both writers write).
    static let minimumSaltSize = 32
    /// The largest salt accepted.
    static let maximumSaltSize = 1024
    /// The largest file read: a bound on what a hostile file makes us allocate.
    static let maximumFileSize = 64 << 20
    /// The largest secret stored in one item.
    static let maximumSecretSize = 16 << 20
    /// The largest encrypted item read: the largest secret with room for its attributes and
    /// label. Each item is decrypted into guarded (locked) memory of its size, so a hostile
    /// file's one huge item must not ask for all of the file's 64 MiB at once.
    static let maximumItemSize = maximumSecretSize + (1 << 20)
}
