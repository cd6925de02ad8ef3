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

    /// The stripes the lock tests of this process hold for a while (`AsyncKeyLockTests`,
    /// `SaveTakeLockTests`): a test with a short deadline keeps its other keys out of them, so
    /// that a parallel test's hold can never make it `busy`.
    static let heldStripes: Set<Int> = [heldInProcess, heldAcrossProcesses, heldUntilBusy]
    /// Held by a test of this process while a save or take of this process waits for it.
    static let heldInProcess = 61
    /// Held by a test while a probe process's saves wait for it (the key `probe-async`/`one`).
    static let heldAcrossProcesses = KeyLock.stripe(service: "probe-async", account: "one")
    /// Held while saves and takes of a store with a short deadline answer `busy`.
    static let heldUntilBusy = 62

    /// A key of `service` under `prefix` whose lock is in `stripe`.
    static func key(service: String, prefix: String, inStripe stripe: Int) -> CredentialKey {
        (0...).lazy.map { CredentialKey(service: service, account: "acct-\($0)") }.first { Self.stripe($0, prefix: prefix) == stripe }!
    }

    /// A key of `service` under `prefix` whose lock is in none of `stripes`.
    static func key(service: String, prefix: String, outside stripes: Set<Int>) -> CredentialKey {
        (0...).lazy.map { CredentialKey(service: service, account: "other-\($0)") }.first { !stripes.contains(Self.stripe($0, prefix: prefix)) }!
    }
}
