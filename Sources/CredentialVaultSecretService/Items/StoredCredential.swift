import CredentialVault
import Foundation

/// An item seen as one of this store's credentials.
struct StoredCredential {
    /// The item.
    let item: ItemInfo
    /// The credential's key (with the item's label when it is not the default one).
    let key: CredentialKey
    /// `portable` only when the item says so: items written by other tools are device-only.
    let accessibility: Accessibility
    /// Whether the item is in the `session` collection (ephemeral).
    let isEphemeral: Bool
    /// When an ephemeral item expires (`nil`: never, for items other tools put in `session`).
    let expiresAt: Date?

    /// `nil` when the item is not a credential of this store (see `CredentialNaming.key(of:)`).
    init?(_ item: ItemInfo, naming: CredentialNaming, inSession: Bool) {
        guard let key = naming.key(of: item) else { return nil }
        self.item = item
        self.key = key
        accessibility = item.attributes[ItemAttribute.accessibility] == ItemAttribute.portable ? .portable : .deviceOnly
        isEphemeral = inSession
        expiresAt = inSession ? ExpiryStamp.decode(item.attributes[ItemAttribute.expires]) : nil
    }

    /// Whether the credential's time to live is over at `now`.
    func isExpired(at now: Date) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt <= now
    }

    /// The metadata `TokenStorageAdapter.metadata(for:)` reports: the dates are the daemon's
    /// (whole seconds; `nil` when it gave none).
    var metadata: CredentialMetadata {
        // An ephemeral credential is always device-only.
        CredentialMetadata(
            key: key, accessibility: isEphemeral ? .deviceOnly : accessibility, isEphemeral: isEphemeral,
            created: item.createdDate, modified: item.modifiedDate, expiresAt: expiresAt)
    }
}
