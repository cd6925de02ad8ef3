import CredentialVault
import CredentialVaultCLI
import CredentialVaultSecretService
import CredentialVaultTPM
import Foundation

/// `credvault-full`'s backends, for the shared vault commands: the Secret Service and the
/// automatic choice, the keyring and TPM custodians, and the fleet store (`FleetOptions`).
/// Nothing is handed over: this executable has every backend.
struct FullBackends: BackendFactory {
    var handOver: (@Sendable (_ needing: String) -> Int32)? { nil }

    /// `secret-service` is taken as it is; `auto` asks the Secret Service (never prompting) and
    /// falls back to the sealed file only when the Secret Service is unavailable: a locked
    /// keyring is reported (exit code 10), never silently replaced by the file, whose
    /// credentials would then be apart from the keyring's. `libsecret-file` is libsecret's
    /// keyring file, keyed by the Secret portal inside a sandbox or by
    /// `--keyring-file-password-file`; outside a sandbox without one it is refused (exit code
    /// 8). $CREDVAULT_BACKEND was already consulted by the caller. The CLI's namespace is
    /// `credvault` (unscoped items, its vault).
    func resolve(_ name: String, request: VaultRequest) throws -> BackendResolution {
        guard let choice = BackendChoice(name: name) else {
            throw UsageError("unknown backend '\(name)' (file, secret-service, memory, auto, libsecret-file)")
        }
        let resolver = try resolver(request, for: choice)
        let decision: BackendDecision
        do {
            decision = try resolver.decide(choice)
        } catch {
            guard case .notAvailable = error, choice == .libsecretFile else { throw error }
            // The library's words name its API; here the option is what to give.
            throw CredentialVaultError.notAvailable(
                "libsecret's keyring file outside a Flatpak or Snap sandbox needs its password: give --keyring-file-password-file PATH "
                    + "(only a sandboxed app gets a key from the Secret portal)")
        }
        if decision.isKeyringLocked, let status = decision.secretServiceStatus {
            return BackendResolution(
                kind: .secretService,
                reason: "the Secret Service's \(status.collectionLabel) collection is locked: \(status.provider.unlockAdvice), "
                    + "or pass --backend file to use the sealed file",
                isLocked: true)
        }
        let kind: VaultBackend =
            switch decision.kind {
            case .secretService: .secretService
            case .file: .file
            case .memory: .memory
            case .libsecretFile: .libsecretFile
            case .systemdCredentials: throw UsageError("the systemd-credentials backend is for services using the library, not for credvault")
            }
        let file = decision.libsecretFile.map { (path: $0.path, key: $0.key.description) }
        return BackendResolution(kind: kind, reason: decision.reason, custody: decision.custody, keyringFile: file)
    }

    /// libsecret's keyring file, decided as `resolve` decides it; the portal is asked now.
    func openLibsecretFile(_ request: VaultRequest) throws -> any TokenStorageBackend {
        try resolver(request, for: .libsecretFile).open(.libsecretFile).store
    }

    /// The resolver of `request` for `choice`: in this process's sandbox (`request.sandbox`,
    /// the rule every part uses), with libsecret's path variable and, for `libsecret-file`, the password file
    /// read (only then).
    private func resolver(_ request: VaultRequest, for choice: BackendChoice) throws -> BackendResolver {
        // Of the environment only what libsecret itself reads for its file's path:
        // $CREDVAULT_BACKEND was consulted by the caller, and systemd's credentials are not the CLI's.
        let environment = ProcessInfo.processInfo.environment.filter { $0.key == "SECRET_FILE_TEST_PATH" }
        var resolver = BackendResolver(
            application: .credvault, environment: environment,
            secretService: SecretServiceConfiguration(application: .credvault, timeout: try SecretServiceTimeout.current()),
            sealedFileURL: request.vaultURL)
        resolver.sandbox = request.sandbox
        resolver.portal = SecretPortal(sandbox: request.sandbox)
        if choice == .libsecretFile, let path = request.keyringFilePasswordFile {
            resolver.libsecretFilePassword = try SecretReader.bytes(fromFile: path, what: "keyring file password")
        }
        return resolver
    }

    /// The login keyring's custodian, the TPM's (`--tpm-tcti`, else `$CREDVAULT_TPM_TCTI`, else
    /// the kernel's resource manager `device:/dev/tpmrm0`) and the Secret portal's (which
    /// refuses outside a sandbox).
    func custodians(_ request: VaultRequest) throws -> [any DeviceCustodian] {
        let tcti = request.tpmTCTI ?? "device:/dev/tpmrm0"
        return [
            KeyringCustodian(timeout: try SecretServiceTimeout.current()), TPMCustodian(configuration: TPMConfiguration(tcti: tcti)),
            PortalCustodian(portal: SecretPortal(sandbox: request.sandbox)),
        ]
    }

    func openSecretService(allowingInteraction: Bool) -> any TokenStorageBackend {
        // The variable was checked by `resolve`, which every Secret Service command passes first.
        let timeout = (try? SecretServiceTimeout.current()) ?? .seconds(5)
        return SecretServiceStore(configuration: SecretServiceConfiguration(application: .credvault, timeout: timeout, allowsInteraction: allowingInteraction))
    }

    /// Adds the Secret Service's provider, state, collection and capabilities (the provider's:
    /// ephemeral only with a session collection) to `info`; returns the exit code
    /// (`notAvailable`, `busy` for a time-out, when it cannot be asked). Never prompts.
    func describeSecretService(into info: inout [(String, String)]) -> Int32 {
        let timeout = (try? SecretServiceTimeout.current()) ?? .seconds(5)
        let store = SecretServiceStore(configuration: SecretServiceConfiguration(application: .credvault, timeout: timeout))
        var code = ExitCode.success
        do {
            let status = try store.status()
            info.append(("provider", status.provider.description))
            info.append((
                "state",
                status.isLocked ? "locked: \(status.provider.unlockAdvice) (a command with --interactive lets it ask you)" : "unlocked"
            ))
            let ephemeral =
                status.supportsEphemeral
                ? "ephemeral credentials in the session collection"
                : "no session collection: ephemeral credentials are not supported"
            info.append(("stores in", "Secret Service collection \"\(status.collectionLabel)\" (\(status.collectionPath)); \(ephemeral)"))
            if !status.isLocked { info.append(("credentials", String(try store.listKeys().count))) }
        } catch {
            info.append(("state", "not available: \(error)"))
            code = ExitCode.of(error)
        }
        info.append(("capabilities", store.capabilities.description))
        return code
    }
}
