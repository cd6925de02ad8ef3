import CLibSecret
import CredentialVault
import Foundation

/// One item of the keyring file once decrypted: the GVariant `(a{ss}sttay)` of libsecret's
/// `secret-file-item.c`: attributes (names and values in clear, inside the encryption), label,
/// creation and modification times (seconds since 1970) and the secret's bytes.
struct KeyringItem {
    /// The attributes; what searches match (through their HMACs outside the encryption).
    var attributes: [String: String]
    /// The label libsecret apps show.
    var label: String
    /// When the item was first stored (seconds since 1970; libsecret keeps it on replace).
    var created: UInt64
    /// When the item was last stored.
    var modified: UInt64
    /// The secret. The caller wipes it when done.
    var secret: Data

    /// Reads the plaintext of a decrypted item (untrusted: see `VariantCodec.read`). Throws
    /// `corrupted` when it is not an item.
    static func decode(_ plaintext: UnsafeRawBufferPointer) throws(CredentialVaultError) -> KeyringItem {
        try VariantCodec.read(plaintext, as: KeyringFileLayout.itemType, what: "an item of the keyring file") {
            (item) throws(CredentialVaultError) -> KeyringItem in
            var attributes: [String: String] = [:]
            try VariantCodec.child(item, 0) { (dictionary) throws(CredentialVaultError) in
                for index in 0..<VariantCodec.count(dictionary) {
                    try VariantCodec.child(dictionary, index) { (entry) throws(CredentialVaultError) in
                        let name = try VariantCodec.child(entry, 0) { VariantCodec.string($0) }
                        attributes[name] = try VariantCodec.child(entry, 1) { VariantCodec.string($0) }
                    }
                }
            }
            let label = try VariantCodec.child(item, 1) { VariantCodec.string($0) }
            let created = try VariantCodec.child(item, 2) { UInt64(g_variant_get_uint64($0)) }
            let modified = try VariantCodec.child(item, 3) { UInt64(g_variant_get_uint64($0)) }
            let secret = try VariantCodec.child(item, 4) { Data(VariantCodec.bytes($0)) }
            return KeyringItem(attributes: attributes, label: label, created: created, modified: modified, secret: secret)
        }
    }

    /// The item's plaintext GVariant, in guarded memory (the secret is not copied on the way:
    /// GLib serialises it from this item's bytes straight into the buffer): the buffer and how
    /// many of its bytes are the plaintext.
    func encoded() -> (bytes: SecureBytes, count: Int) {
        secret.withUnsafeBytes { secretBytes in
            let entries = attributes.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { name, value in
                VariantCodec.entry(VariantCodec.string(name), VariantCodec.string(value))
            }
            return VariantCodec.serializedSecurely(
                VariantCodec.tuple([
                    VariantCodec.array(of: "{ss}", entries), VariantCodec.string(label), g_variant_new_uint64(guint64(created)),
                    g_variant_new_uint64(guint64(modified)), VariantCodec.borrowedByteArray(secretBytes),
                ]))
        }
    }
}
