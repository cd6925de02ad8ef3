#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Unlocking through a short-lived cache of the vault's key-encryption key in the kernel
/// keyring (`KernelKeyCache`; off unless asked: `credvault --key-cache SECONDS`), so that a
/// script that runs `credvault` many times pays a passphrase's Argon2id once, not per process.
///
/// What is cached is the KEK, which unwraps the data key: anyone who can read the entry (this
/// uid, root) can open the vault until the kernel expires it. It is named after the vault's key
/// parameters and wrapped key (public header fields), so a changed passphrase, a rotation or
/// another vault never finds it. Device-key vaults are not cached (their key is no secret
/// typed by anyone, and its custodian is asked each time).
extension LockedVault {
    /// The cache entry's name for this vault as its header is now.
    public var keyCacheName: String {
        var material = header.keyParameterBytes()
        material.append(contentsOf: header.wrappedKey)
        let digest = Array(material.withUnsafeBytes { Crypto.keyedHash(key: nil, [$0]) }.prefix(16))
        return "vault-kek:" + HostFileCustodian.name(digest)
    }

    /// Unlocks with the KEK `cache` holds for this vault when there is one and it unwraps the
    /// data key, without calling `key`; else with `key()`, caching the KEK for `timeout`.
    /// Returns the store and whether the cache was used (`hit`) and could be written (`stored`:
    /// `false` when the kernel keyring refused, e.g. under a seccomp filter: the unlock still
    /// happened, the next one derives again).
    public func unlock(
        cachingKeyIn cache: KernelKeyCache, for timeout: Duration, configuration: SealedFileConfiguration = SealedFileConfiguration(),
        secret key: () throws(CredentialVaultError) -> VaultSecret
    ) throws(CredentialVaultError) -> (store: SealedFileStore, hit: Bool, stored: Bool) {
        guard keySource != .device else { return (try unlock(with: try key(), configuration: configuration), false, false) }
        let name = keyCacheName
        if let cached = try? cache.load(name: name) {
            do throws(CredentialVaultError) {
                return (try unlock(kek: cached, configuration: configuration), true, true)
            } catch .wrongPassphrase {
                try? cache.remove(name: name)  // not this vault's KEK (any process of this uid can write the entry)
            }
        }
        let kek = try KeyWrapping.keyEncryptionKey(try key(), header: header, configuration: configuration)
        let store = try unlock(kek: kek, configuration: configuration)
        let stored = (try? cache.store(kek, name: name, timeout: timeout)) != nil
        return (store, false, stored)
    }

    /// Removes this vault's cached KEK, if any (`credvault --key-cache 0`).
    public func forgetCachedKey(in cache: KernelKeyCache) throws(CredentialVaultError) {
        try cache.remove(name: keyCacheName)
    }
}
