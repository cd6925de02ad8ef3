import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension VaultAccess {
    /// The sealed-file configuration: the custody and counter a new vault gets, the
    /// custodians this executable offers (the keyring's and the TPM's only in `credvault-full`),
    /// and the lock wait (the default, unless a test sets `TestLockWait.variable`). `custody`
    /// is the backend resolution's for a new vault, unless `--custody` is given; without either,
    /// the request's default (`VaultRequest.defaultCustody`: portal inside a sandbox).
    package func configuration(custody: DeviceCustody? = nil) throws -> SealedFileConfiguration {
        var configuration = SealedFileConfiguration()
        if let wait = try TestLockWait.current() { configuration.lockTimeout = wait }
        configuration.custody = request.custodyName == nil ? (custody ?? request.defaultCustody) : try request.custody()
        configuration.rollbackCounter = try request.rollbackCounter()
        configuration.custodians = try backends.custodians(request)
        return configuration
    }

    /// Opens (or creates) the sealed-file vault with the key the options give, or the device
    /// key when none is given. A vault that needs another kind of key is reported clearly.
    /// `custody`: what a new vault gets unless `--custody` says (see `configuration(custody:)`).
    package func openSealedFile(create: Bool, custody: DeviceCustody? = nil) throws -> SealedFileStore? {
        let url = request.vaultURL
        let unlock = request.unlock
        // Only a missing file is "no vault": a link, a loose mode or an unreadable directory is
        // reported, never taken for an empty vault or a place to create one.
        try unlock.checkOne()
        let present = try LockedVault.ifPresent(at: url)
        let configuration = try configuration(custody: custody)
        guard let locked = present else {
            guard create else { return nil }
            let key = try unlock.explicitKey(confirmNew: true)
            return try SealedFileStore.openOrCreate(at: url, secret: key ?? .device, kdf: request.kdf(), configuration: configuration)
        }
        // Asked for only when needed: with a cached key, a passphrase is neither read nor prompted for.
        func key() throws -> VaultSecret {
            if let key = try unlock.explicitKey() { return key }
            guard locked.keySource == .device else {
                throw UsageError(
                    "\(url.path) is unlocked with a \(locked.keySource): give --passphrase-file, --key-file or --ask-passphrase")
            }
            return .device
        }
        guard let seconds = try request.keyCacheSeconds(), locked.keySource != .device else {
            return try locked.unlock(with: key(), configuration: configuration)
        }
        let cache = KernelKeyCache()
        if seconds == 0 {
            try locked.forgetCachedKey(in: cache)
            return try locked.unlock(with: key(), configuration: configuration)
        }
        var usage: UsageError?
        let opened: (store: SealedFileStore, hit: Bool, stored: Bool)
        do {
            opened = try locked.unlock(cachingKeyIn: cache, for: .seconds(seconds), configuration: configuration) {
                () throws(CredentialVaultError) -> VaultSecret in
                do {
                    return try key()
                } catch let error as CredentialVaultError {
                    throw error
                } catch {
                    usage = error as? UsageError ?? UsageError("\(error)")
                    throw .invalidArgument("no key")
                }
            }
        } catch {
            if let usage { throw usage }  // the key options' own error, as without the cache
            throw error
        }
        if !opened.hit && !opened.stored {
            TerminalIO().error("warning: the kernel keyring refused the key cache (--key-cache): the key was not cached")
        }
        return opened.store
    }
}
