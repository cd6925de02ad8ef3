import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

extension VaultRequest {
    /// What in this request needs `credvault-full`'s custodians: a `--custody` other than
    /// `file`, an existing vault whose header names one, a new vault inside a sandbox (portal
    /// custody by default), or any vault on a machine whose TPM
    /// this user reaches (which may hold the vault's counter since a move to TPM custody that
    /// the copy at the path predates: only `credvault-full` can ask it); `nil` when nothing
    /// does. Reads only the vault's header.
    ///
    /// The TPM case does not depend on what is at the vault's path now: the command opens the
    /// vault later, and whoever writes the user's files can have nothing (or something
    /// unreadable) there when this looks and the pre-move copy there when the command opens it.
    package var custodyNeedingFullExecutable: String? {
        if let custodyName, custodyName != DeviceCustody.file.name { return "--custody \(custodyName)" }
        let existing = LockedVault.custody(at: vaultURL)
        if let existing, existing != .file { return "a vault under \(existing.name) custody" }
        // A new vault inside a sandbox gets the portal's custody (`defaultCustody`).
        if existing == nil, custodyName == nil, defaultCustody != .file { return "a new vault inside a Flatpak or Snap sandbox (portal custody)" }
        if tpmIsReachable { return "a vault on a machine with a TPM (which may hold its rollback counter)" }
        return nil
    }

    /// Whether `credvault-full` would reach a TPM: one named (`--tpm-tcti`,
    /// `$CREDVAULT_TPM_TCTI`), or the default device open to this user for reading and writing.
    var tpmIsReachable: Bool {
        namesTPM || access("/dev/tpmrm0", R_OK | W_OK) == 0
    }
}
