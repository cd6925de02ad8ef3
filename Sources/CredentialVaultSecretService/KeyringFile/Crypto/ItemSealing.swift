import CredentialVault
import Foundation

/// An item in and out of its encrypted form, as libsecret's `secret-file-collection.c` does it:
/// the plaintext GVariant AES-128-CBC encrypted with a random IV, then `ciphertext || IV ||
/// HMAC-SHA256(ciphertext || IV)`, and beside it the attribute names with the HMACs of their
/// values, sorted by name.
enum ItemSealing {
    /// Encrypts `item` and hashes its attributes. Throws `io` when OpenSSL fails.
    static func seal(_ item: KeyringItem, key: KeyringKey) throws(CredentialVaultError) -> EncryptedItem {
        let (plaintext, count) = item.encoded()
        let iv = Crypto.randomBytes(KeyringFileLayout.blockSize)
        var blob = try plaintext.withUnsafeBytes { (bytes) throws(CredentialVaultError) in
            try ItemCipher.encrypt(UnsafeRawBufferPointer(rebasing: bytes[..<count]), key: key, iv: iv)
        }
        blob += iv
        blob += try blob.withRawBytes { (bytes) throws(CredentialVaultError) in try KeyringMAC.compute(bytes, key: key) }
        var hashed: [(name: String, mac: [UInt8])] = []
        // Sorted by the names' bytes (libsecret sorts with strcmp): libsecret replaces an item
        // only when the whole hashed dictionary is equal, order included.
        for (name, value) in item.attributes.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            hashed.append((name, try KeyringMAC.compute(value: value, key: key)))
        }
        return EncryptedItem(hashedAttributes: hashed, blob: blob)
    }

    /// Verifies and decrypts `item`: first its MAC (in constant time), and only then the
    /// decryption and the GVariant; then the attributes inside against the hashes outside,
    /// which the MAC does not cover (an item's blob moved under another item's attributes is
    /// caught here), each name outside once, the same names as inside. Throws `tampered` when a MAC does not match (a wrong key gives the same:
    /// see `KeyringFile.decrypt`), `corrupted` for a bad padding or plaintext.
    static func open(_ item: EncryptedItem, key: KeyringKey) throws(CredentialVaultError) -> KeyringItem {
        let macStart = item.blob.count - KeyringFileLayout.macSize
        let ivStart = macStart - KeyringFileLayout.blockSize
        let decrypted = try item.blob.withRawBytes { (blob) throws(CredentialVaultError) -> KeyringItem in
            let authenticated = UnsafeRawBufferPointer(rebasing: blob[..<macStart])
            guard try KeyringMAC.verify(authenticated, key: key, expected: Array(blob[macStart...])) else { throw .tampered }
            let (plaintext, count) = try ItemCipher.decrypt(
                UnsafeRawBufferPointer(rebasing: blob[..<ivStart]), key: key, iv: UnsafeRawBufferPointer(rebasing: blob[ivStart..<macStart]))
            return try plaintext.withUnsafeBytes { (bytes) throws(CredentialVaultError) in
                try KeyringItem.decode(UnsafeRawBufferPointer(rebasing: bytes[..<count]))
            }
        }
        guard decrypted.attributes.count == item.hashedAttributes.count else { throw .tampered }
        for (name, mac) in item.hashedAttributes {
            guard let value = decrypted.attributes[name], constantTimeEquals(try KeyringMAC.compute(value: value, key: key), mac) else {
                throw .tampered
            }
        }
        // Both ways: a name repeated outside (its hash copied) could otherwise stand in for an
        // attribute inside, hiding it from searches (an expiry, an application) with the count equal.
        for name in decrypted.attributes.keys where item.mac(of: name) == nil { throw .tampered }
        return decrypted
    }
}
