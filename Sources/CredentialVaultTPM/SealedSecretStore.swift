import CredentialVault
import Logging

/// Reads and creates the sealed device secret's file through the core's private-file helpers:
/// the directory opened and checked once (0700, the user's), the file opened without following
/// a link and checked with `fstat` (0600, the user's, bounded), created complete and durably
/// without ever replacing anything.
struct SealedSecretStore {
    let configuration: TPMConfiguration

    /// The sealed secret; `nil` when it (or its directory) does not exist.
    func read() throws(CredentialVaultError) -> SealedSecretFile? {
        guard let directory = try PrivateDirectory.open(configuration.directory),
            let bytes = try PrivateFiles.read(FileLocation(configuration.fileName, in: directory), limit: SealedSecretFile.limit)
        else { return nil }
        return try SealedSecretFile(bytes: bytes, path: configuration.path)
    }

    /// Creates the file; `false`, having changed nothing, when one exists already.
    func create(_ sealed: SealedSecretFile) throws(CredentialVaultError) -> Bool {
        let directory = try PrivateDirectory.create(configuration.directory)
        return try AtomicFile.create(sealed.bytes, at: FileLocation(configuration.fileName, in: directory))
    }

    /// The blob was sealed with other PCRs than the configuration names: refused, never used
    /// with the blob's own (weaker, or other) binding.
    func pcrMismatch(sealed: PCRSelection?, configured: PCRSelection?) -> CredentialVaultError {
        configuration.logger.warning(
            "the TPM-sealed device secret is bound to \(sealed?.description ?? "no PCRs"), not to the configured \(configured?.description ?? "none"): refused",
            metadata: ["category": "tpm", "tcti": .string(configuration.tcti)])
        return .invalidArgument(
            "the TPM-sealed device secret \(configuration.path) is bound to \(sealed?.description ?? "no PCRs"), but the configuration asks for \(configured?.description ?? "none"); configure the PCRs it was sealed with (moving it to other PCRs needs a re-seal)")
    }
}
