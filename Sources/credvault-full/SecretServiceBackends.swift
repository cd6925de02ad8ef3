import CredentialVault
import CredentialVaultCLI
import CredentialVaultSecretService
import Foundation

/// The Secret Service backend and the automatic choice, for the shared vault commands.
struct SecretServiceBackends: ExtendedBackends {
    /// `secret-service` is taken as it is; `auto` asks the Secret Service (never prompting) and
    /// falls back to the sealed file. $CREDVAULT_BACKEND was already consulted by the caller.
    func resolve(_ name: String, vaultURL: URL) throws -> BackendResolution {
        guard let choice = BackendChoice(name: name) else {
            throw UsageError("unknown backend '\(name)' (file, secret-service, memory, auto)")
        }
        let decision = try BackendResolver(environment: [:], sealedFileURL: vaultURL).decide(choice)
        let kind: VaultBackend =
            switch decision.kind {
            case .secretService: .secretService
            case .file: .file
            case .memory: .memory
            }
        return BackendResolution(kind: kind, reason: decision.reason)
    }

    func openSecretService() -> any TokenStorageAdapter { SecretServiceStore() }

    /// Adds the Secret Service's state, collection and capabilities to `info`; returns the exit
    /// code (`notAvailable`, `busy` for a time-out, when it cannot be asked). Never prompts.
    func describeSecretService(into info: inout [(String, String)]) -> Int32 {
        let store = SecretServiceStore()
        var code = ExitCode.success
        do {
            let status = try store.status()
            info.append(("state", status.isLocked ? "locked (unlock the keyring in the desktop session, e.g. with seahorse)" : "unlocked"))
            info.append((
                "stores in",
                "Secret Service collection \"\(status.collectionLabel)\" (\(status.collectionPath)); ephemeral credentials in the session collection"
            ))
            if !status.isLocked { info.append(("credentials", String(try store.listKeys().count))) }
        } catch {
            info.append(("state", "not available: \(error)"))
            code = ExitCode.of(error)
        }
        info.append(("capabilities", store.capabilities.description))
        return code
    }
}
