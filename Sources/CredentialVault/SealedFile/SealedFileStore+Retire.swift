#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Retiring a vault: its rollback counter released at its custodian, then the file removed.
extension SealedFileStore {
    /// Removes the vault at `url` for good, and first its rollback counter (a TPM NV index, a
    /// keyring item or a counter file), which deleting the file alone would leave behind: NV
    /// space is small and shared on a real TPM. `key` must open the vault, which confirms it is
    /// the vault meant; the custodian removes only a counter that this vault's authorization
    /// opens, never another's at that place.
    ///
    /// A copy older than its counter (`rolledBack`) is refused and nothing is removed: the
    /// counter belongs to a newer copy of this vault (two copies at different paths share one),
    /// which would then be refused as rolled back. Delete such a copy as a plain file. A copy
    /// from before a move to TPM custody is refused likewise (accept it first to retire it).
    /// A counter already missing (an interrupted retire, another TPM) is not an error: the file
    /// goes. The order (counter, mark, file) makes an interrupted retire one that can be run
    /// again: the file left behind opens for it, never a vault silently without protection.
    public static func retire(
        at url: URL, secret key: VaultSecret, configuration: SealedFileConfiguration = SealedFileConfiguration()
    ) throws(CredentialVaultError) {
        let store = try LockedVault(url: url).unlock(with: key, configuration: configuration, acceptingRollback: true)
        try store.holdingVaultLock { () throws(CredentialVaultError) in
            let (header, rollback, stamp) = try store.read { ($0.contents.header, $0.rollback, $0.contents.journal.counter) }
            let vaultID = header.vaultID
            // A copy from before a move to another custodian: that custodian's counter is the
            // newer vault's, and nothing would release it once this file is gone.
            try configuration.refuseIfAnchoredElsewhere(header)
            if let rollback,
                try rollback.custodian.readCounter(vaultID: vaultID, reference: stamp.reference, binding: rollback.binding) != nil
            {
                do throws(CredentialVaultError) {
                    try rollback.verify(stamp)
                } catch .rolledBack(let why) {
                    throw .rolledBack(
                        "\(why); not retired: its counter is a newer copy's (another path?), which would be refused without it; nothing was removed (a stale copy can be deleted as a file)")
                }
                try rollback.custodian.removeCounter(vaultID: vaultID, reference: stamp.reference, binding: rollback.binding)
            }
            try configuration.markRollbackProtected(vaultID, false)
            let location = store.location
            guard unlinkat(location.directoryFD, location.name, 0) == 0 || errno == ENOENT else {
                throw .io("cannot remove \(url.path) (\(String(cString: strerror(errno)))); its rollback counter was released: remove the file")
            }
            // Its lock file too (held here: a process waiting for it gives up as `busy`).
            unlinkat(store.lockLocation.directoryFD, store.lockLocation.name, 0)
        }
    }
}
