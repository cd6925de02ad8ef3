import CredentialVault
import CredentialVaultCLI
import CredentialVaultSecretService
import Foundation

/// The Secret Service backend and the automatic choice, for the shared vault commands.
struct SecretServiceBackends: ExtendedBackends {
    /// `secret-service` is taken as it is; `auto` asks the Secret Service (never prompting) and
    /// falls back to the sealed file only when the Secret Service is unavailable: a locked
    /// keyring is reported (exit code 10), never silently replaced by the file, whose
    /// credentials would then be apart from the keyring's. $CREDVAULT_BACKEND was already
    /// consulted by the caller. The CLI's namespace is `credvault` (unscoped items, its vault).
    func resolve(_ name: String, vaultURL: URL) throws -> BackendResolution {
        guard let choice = BackendChoice(name: name) else {
            throw UsageError("unknown backend '\(name)' (file, secret-service, memory, auto)")
        }
        let resolver = BackendResolver(application: .credvault, environment: [:], sealedFileURL: vaultURL)
        let decision = try resolver.decide(choice)
        if decision.isKeyringLocked, let status = decision.secretServiceStatus {
            return BackendResolution(
                kind: .secretService,
                reason: "the Secret Service's \(status.collectionLabel) collection is locked: unlock it (log in to the desktop "
                    + "session, or use seahorse), or pass --backend file to use the sealed file",
                isLocked: true)
        }
        let kind: VaultBackend =
            switch decision.kind {
            case .secretService: .secretService
            case .file: .file
            case .memory: .memory
            }
        return BackendResolution(kind: kind, reason: decision.reason)
    }

    /// The login keyring's custodian (the TPM's joins it when `CredentialVaultTPM` is linked).
    func custodians(_ args: ParsedArguments) throws -> [any DeviceCustodian] {
        [KeyringCustodian()]
    }

    func openSecretService() -> any CredentialStore {
        SecretServiceStore(configuration: SecretServiceConfiguration(application: .credvault))
    }

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
