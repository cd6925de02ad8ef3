import CredentialVault

/// One element of the file's item array, as stored: the attributes with their values replaced
/// by HMACs, and the encrypted blob (`ciphertext || IV || HMAC(ciphertext || IV)`).
struct EncryptedItem {
    /// Attribute names (in clear) and the HMAC-SHA256 of each value, in the file's order
    /// (libsecret sorts the names by their bytes when it writes; so does `KeyringFile`).
    var hashedAttributes: [(name: String, mac: [UInt8])]
    /// Ciphertext, IV and MAC.
    var blob: [UInt8]

    /// The HMAC recorded for the attribute `name`, if the item has it.
    func mac(of name: String) -> [UInt8]? {
        hashedAttributes.first { CredentialKey.sameName($0.name, name) }?.mac
    }

    /// The item's bytes as the file holds them (each hashed attribute, then the blob): equal
    /// for exact copies only.
    var identity: [UInt8] {
        var bytes: [UInt8] = []
        for (name, mac) in hashedAttributes {
            bytes += withUnsafeBytes(of: UInt32(name.utf8.count).littleEndian, Array.init)
            bytes += Array(name.utf8) + mac
        }
        return bytes + blob
    }

    /// Whether the item has the attribute `name` (names are in clear: no key is needed).
    func has(attribute name: String) -> Bool { mac(of: name) != nil }

    /// Throws `corrupted` when a length is not what the format allows: every attribute HMAC is
    /// 32 bytes, and the blob is at least one block of ciphertext, a multiple of the block
    /// size, plus IV and MAC, at most `KeyringFileLayout.maximumItemSize` in all. Checked when the file is read, before anything uses the item.
    func checkLengths() throws(CredentialVaultError) {
        for attribute in hashedAttributes where attribute.mac.count != KeyringFileLayout.macSize {
            throw .corrupted("an attribute hash of the keyring file is \(attribute.mac.count) bytes, not \(KeyringFileLayout.macSize)")
        }
        let ciphertext = blob.count - KeyringFileLayout.blockSize - KeyringFileLayout.macSize
        guard ciphertext >= KeyringFileLayout.blockSize, ciphertext % KeyringFileLayout.blockSize == 0,
            blob.count <= KeyringFileLayout.maximumItemSize
        else {
            throw .corrupted("an item of the keyring file has an encrypted part of \(blob.count) bytes, which no item can have")
        }
    }
}
