import CredentialVault
import Foundation
@testable import CredentialVaultSecretService

/// Direct looks at (and writes to) the items behind a key, below the store's API, for the tests
/// that check what a save leaves in the keyring.
enum KeyItems {
    /// The item attributes that identify `key` under `prefix`.
    static func identity(_ key: CredentialKey, prefix: String) -> [String: String] {
        [ItemAttribute.service: prefix + key.service, ItemAttribute.account: key.account]
    }

    /// The paths of every item of `key`, in every collection, locked or not.
    static func paths(_ key: CredentialKey, prefix: String, store: SecretServiceStore) throws -> [String] {
        try store.perform { (call) throws(CredentialVaultError) -> [String] in
            let found = try call.search(identity(key, prefix: prefix))
            return found.unlocked + found.locked
        }
    }

    /// Writes one more item of `key` (never replacing one), as an older version of this library
    /// could leave behind: in the default collection, or the session one with an expiry.
    static func addDuplicate(
        _ key: CredentialKey, prefix: String, value: Data, ephemeral: Bool = false, store: SecretServiceStore
    ) throws {
        var attributes = identity(key, prefix: prefix)
        attributes[ItemAttribute.accessibility] = ItemAttribute.deviceOnly
        if ephemeral { attributes[ItemAttribute.expires] = ExpiryStamp.encode(Date().addingTimeInterval(600)) }
        try store.perform { (call) throws(CredentialVaultError) in
            guard let collection = try call.collectionPath(ephemeral ? .session : .default) else { throw .notAvailable("no collection") }
            _ = try call.createItem(in: collection, attributes: attributes, label: "duplicate", value: value)
        }
    }

    /// The lock file of `key` under `prefix` (see `KeyLock`).
    static func lockPath(_ key: CredentialKey, prefix: String) throws -> String {
        try KeyLock.path(service: prefix + key.service, account: key.account)
    }

    /// The stripe of `key` under `prefix` (see `KeyLock`).
    static func stripe(_ key: CredentialKey, prefix: String) -> Int {
        KeyLock.stripe(service: prefix + key.service, account: key.account)
    }
}
