import CredentialVault
import Foundation

/// A decrypted item of the keyring file seen as one of this store's credentials: the Secret
/// Service backend's view of an item (`StoredCredential`), so that names, accessibility and
/// expiry read the same in both backends. An item is ephemeral when it has an expiry
/// attribute (only ephemeral saves write one), where the Secret Service keeps it in `session`.
struct FileCredential {
    /// The item's index in the file (later is newer).
    let index: Int
    /// The indices of exact copies of the item later in the file (the same hashed attributes,
    /// ciphertext, IV and MAC): the same credential, not decrypted again, removed with it.
    var copies: [Int] = []
    /// `index` and the copies': every item of the file that is this credential.
    var indices: [Int] { [index] + copies }
    /// The decrypted item, its secret included.
    var item: KeyringItem
    /// The credential as the Secret Service backend sees an item.
    let stored: StoredCredential

    /// `nil` when the item is not a credential of this store (`CredentialNaming.key(of:)`).
    init?(_ item: KeyringItem, at index: Int, naming: CredentialNaming) {
        // The index stands for the daemon's object path serial in `ItemInfo.order`.
        let info = ItemInfo(
            objectPath: "/keyring-file/\(index)", attributes: item.attributes, label: item.label, created: item.created, modified: item.modified)
        guard let stored = StoredCredential(info, naming: naming, inSession: item.attributes[ItemAttribute.expires] != nil) else { return nil }
        self.index = index
        self.item = item
        self.stored = stored
    }

    /// The current one of several credentials of a key: an ephemeral one first (as the Secret
    /// Service backend reads `session` first), else the newest by modification time, creation
    /// time, then position in the file.
    static func current(of found: [FileCredential]) -> FileCredential? {
        found.filter(\.stored.isEphemeral).max { $0.stored.item.order < $1.stored.item.order }
            ?? found.max { $0.stored.item.order < $1.stored.item.order }
    }
}

extension KeyringItem {
    /// Overwrites the secret's bytes (the item is not used afterwards).
    mutating func wipeSecret() { wipe(&secret) }
}
