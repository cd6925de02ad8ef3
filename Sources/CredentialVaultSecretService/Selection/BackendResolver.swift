import CredentialVault
import Foundation

/// Chooses and opens a backend: the Secret Service when it is reachable and unlocked, else the
/// sealed file unlocked with this machine's device key (zero configuration), unless the
/// program or `CREDVAULT_BACKEND` says otherwise. Never a plaintext store: there is none.
///
/// The automatic choice asks the Secret Service for its state, within
/// `secretService.timeout` (at once when there is no session bus or no provider), and never
/// prompts: a locked keyring means the sealed file.
public struct BackendResolver: Sendable {
    /// The environment consulted for `CREDVAULT_BACKEND` (the process's by default).
    public var environment: [String: String]
    /// How to reach the Secret Service.
    public var secretService: SecretServiceConfiguration
    /// The sealed-file vault to open (or create) with the device key.
    public var sealedFileURL: URL
    /// The sealed file's configuration (device identity, clock, lock wait).
    public var sealedFile: SealedFileConfiguration

    /// Creates a resolver; the defaults are the process environment, the default Secret Service
    /// configuration, and `SealedFileStore.defaultURL`.
    public init(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        secretService: SecretServiceConfiguration = SecretServiceConfiguration(),
        sealedFileURL: URL = SealedFileStore.defaultURL,
        sealedFile: SealedFileConfiguration = SealedFileConfiguration()
    ) {
        self.environment = environment
        self.secretService = secretService
        self.sealedFileURL = sealedFileURL
        self.sealedFile = sealedFile
    }

    /// Decides which backend `choice` means here, without opening it. An explicit choice is
    /// taken as it is; `.automatic` follows `CREDVAULT_BACKEND` when set (throws
    /// `invalidArgument` for an unknown name), else asks the Secret Service.
    public func decide(_ choice: BackendChoice = .automatic) throws(CredentialVaultError) -> BackendDecision {
        switch choice {
        case .secretService: return BackendDecision(kind: .secretService, reason: "chosen explicitly")
        case .file: return BackendDecision(kind: .file, reason: "chosen explicitly")
        case .memory: return BackendDecision(kind: .memory, reason: "chosen explicitly")
        case .automatic: break
        }
        let variable = BackendChoice.environmentVariable
        if let name = environment[variable], !name.isEmpty {
            guard let overridden = BackendChoice(name: name) else {
                throw .invalidArgument("\(variable) must be auto, secret-service, file or memory")
            }
            if overridden != .automatic {
                var decision = try decide(overridden)
                decision.reason = "\(variable)=\(name)"
                return decision
            }
        }
        return automatic()
    }

    /// Decides (see `decide`) and opens the store: the Secret Service store, the sealed file
    /// opened (or created) with the device key, or a new in-memory store.
    public func open(_ choice: BackendChoice = .automatic) throws(CredentialVaultError) -> BackendSelection {
        let decision = try decide(choice)
        let store: any TokenStorageAdapter
        switch decision.kind {
        case .secretService: store = SecretServiceStore(configuration: secretService)
        case .file: store = try SealedFileStore.openOrCreate(at: sealedFileURL, key: .device, configuration: sealedFile)
        case .memory: store = InMemoryStore(defaultService: secretService.defaultService, clock: secretService.clock)
        }
        return BackendSelection(decision: decision, store: store)
    }

    private func automatic() -> BackendDecision {
        let fallback = "using the sealed file \(sealedFileURL.path) with the device key"
        do {
            let status = try SecretServiceStore(configuration: secretService).status()
            if status.isLocked {
                return BackendDecision(
                    kind: .file, reason: "the Secret Service's \(status.collectionLabel) collection is locked: \(fallback)",
                    secretServiceStatus: status)
            }
            return BackendDecision(
                kind: .secretService,
                reason: "the Secret Service is reachable and its \(status.collectionLabel) collection is unlocked",
                secretServiceStatus: status)
        } catch {
            return BackendDecision(kind: .file, reason: "the Secret Service is not usable (\(error)): \(fallback)")
        }
    }
}
