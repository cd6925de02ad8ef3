import CLibSecret
import CredentialVault

/// What a keyring file holds, read or to be written: the key derivation's salt and iteration
/// count, the file's modification time and usage counter, and the encrypted items. Nothing
/// here needs the key (see `KeyringFileLayout` for the format).
struct KeyringFileContents {
    /// The PBKDF2 salt.
    var salt: [UInt8]
    /// The PBKDF2 iteration count.
    var iterations: UInt32
    /// When the file was last written (seconds since 1970; informative, nobody checks it).
    var modified: UInt64
    /// A counter libsecret and oo7 increase with each write (informative).
    var usage: UInt32
    /// The items, in the file's order (a later item was written later).
    var items: [EncryptedItem]

    /// An empty keyring with a fresh random salt and the usual iteration count.
    static func empty(now: UInt64) -> KeyringFileContents {
        KeyringFileContents(
            salt: Crypto.randomBytes(KeyringFileLayout.saltSize), iterations: KeyringFileLayout.iterations, modified: now, usage: 0,
            items: [])
    }

    /// Parses a whole file. Every length is checked before use: the header and version, the
    /// GVariant (untrusted, normal form only), the salt against its recorded size and the
    /// format's bounds, the iteration count against `KeyringFileLayout`'s bounds, each item's
    /// hash and blob lengths. Throws `corrupted` (truncated or malformed data, parameters out of
    /// range) or `unsupported` (another version of the format).
    static func parse(_ file: [UInt8]) throws(CredentialVaultError) -> KeyringFileContents {
        let header = KeyringFileLayout.header
        guard file.count >= header.count, file.starts(with: header) else {
            throw .corrupted("the file does not start with libsecret's keyring header (truncated, or another kind of file)")
        }
        guard file.count >= KeyringFileLayout.prefixCount else { throw .corrupted("the keyring file ends after its header") }
        let version = Array(file[header.count..<KeyringFileLayout.prefixCount])
        guard version == KeyringFileLayout.version else {
            throw .unsupported("keyring file version \(version[0]).\(version[1]); only libsecret's file format 1.0 is read")
        }
        // A copy starting at its own allocation: aligned for GLib, which then need not copy.
        let body = Array(file[KeyringFileLayout.prefixCount...])
        return try body.withRawBytes { (bytes) throws(CredentialVaultError) -> KeyringFileContents in
            try VariantCodec.read(bytes, as: KeyringFileLayout.fileType, what: "the keyring file") { (root) throws(CredentialVaultError) in
                let saltSize = try VariantCodec.child(root, 0) { g_variant_get_uint32($0) }
                let salt = try VariantCodec.child(root, 1) { Array(VariantCodec.bytes($0)) }
                let iterations = try VariantCodec.child(root, 2) { g_variant_get_uint32($0) }
                let modified = try VariantCodec.child(root, 3) { UInt64(g_variant_get_uint64($0)) }
                let usage = try VariantCodec.child(root, 4) { g_variant_get_uint32($0) }
                guard Int(saltSize) == salt.count else {
                    throw .corrupted("the keyring file's salt is \(salt.count) bytes but its header says \(saltSize)")
                }
                guard (KeyringFileLayout.minimumSaltSize...KeyringFileLayout.maximumSaltSize).contains(salt.count) else {
                    throw .corrupted("the keyring file's salt is \(salt.count) bytes, outside \(KeyringFileLayout.minimumSaltSize)...\(KeyringFileLayout.maximumSaltSize)")
                }
                guard (KeyringFileLayout.minimumIterations...KeyringFileLayout.maximumIterations).contains(iterations) else {
                    throw .corrupted(
                        "the keyring file asks for \(iterations) PBKDF2 iterations, outside \(KeyringFileLayout.minimumIterations)...\(KeyringFileLayout.maximumIterations)")
                }
                let items = try VariantCodec.child(root, 5) { (array) throws(CredentialVaultError) -> [EncryptedItem] in
                    var items: [EncryptedItem] = []
                    for index in 0..<VariantCodec.count(array) {
                        let item = try VariantCodec.child(array, index) { (element) throws(CredentialVaultError) in
                            try EncryptedItem(
                                hashedAttributes: hashedAttributes(element), blob: VariantCodec.child(element, 1) { Array(VariantCodec.bytes($0)) })
                        }
                        try item.checkLengths()
                        items.append(item)
                    }
                    return items
                }
                return KeyringFileContents(salt: salt, iterations: iterations, modified: modified, usage: usage, items: items)
            }
        }
    }

    private static func hashedAttributes(_ element: OpaquePointer) throws(CredentialVaultError) -> [(name: String, mac: [UInt8])] {
        try VariantCodec.child(element, 0) { (dictionary) throws(CredentialVaultError) in
            var attributes: [(name: String, mac: [UInt8])] = []
            for index in 0..<VariantCodec.count(dictionary) {
                attributes.append(
                    try VariantCodec.child(dictionary, index) { (entry) throws(CredentialVaultError) in
                        (try VariantCodec.child(entry, 0) { VariantCodec.string($0) }, try VariantCodec.child(entry, 1) { Array(VariantCodec.bytes($0)) })
                    })
            }
            return attributes
        }
    }

    /// The whole file: header, version, then the GVariant, little-endian.
    func serialized() -> [UInt8] {
        let items = items.map { item in
            let attributes = item.hashedAttributes.map { attribute in
                attribute.mac.withUnsafeBytes { VariantCodec.entry(VariantCodec.string(attribute.name), VariantCodec.byteArray($0)) }
            }
            return VariantCodec.tuple([
                VariantCodec.array(of: "{say}", attributes), item.blob.withUnsafeBytes { VariantCodec.byteArray($0) },
            ])
        }
        let root = VariantCodec.tuple([
            g_variant_new_uint32(UInt32(salt.count)), salt.withUnsafeBytes { VariantCodec.byteArray($0) }, g_variant_new_uint32(iterations),
            g_variant_new_uint64(guint64(modified)), g_variant_new_uint32(usage), VariantCodec.array(of: KeyringFileLayout.encryptedItemType, items),
        ])
        return KeyringFileLayout.header + KeyringFileLayout.version + VariantCodec.serializedBytes(root)
    }
}
