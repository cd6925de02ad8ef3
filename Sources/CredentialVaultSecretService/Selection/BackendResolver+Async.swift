import CredentialVault
import Foundation

extension BackendResolver {
    /// `decide(_:)` without blocking the caller: the Secret Service is asked through the store's
    /// async `status()` (on the store's threads), and a wait for unlock
    /// (`.waitForUnlock(timeout:)`) suspends between its questions. Cancelling the task throws
    /// `cancelled` promptly, in a question as in a pause (never a fallback to the sealed file).
    public func decide(_ choice: BackendChoice = .automatic) async throws(CredentialVaultError) -> BackendDecision {
        if let decided = try decideWithoutAsking(choice) { return logged(decided) }
        if let decided = sandboxDecision() { return logged(decided) }
        let store = SecretServiceStore(configuration: secretService)
        let wait = waitPolicy()
        var probe = try await KeyringProbe.asking(store)
        if let wait, probe.isLocked {
            probe = try await wait.run(after: probe) { () async throws(CredentialVaultError) in try await KeyringProbe.asking(store) }
        }
        return try automatic(probe)
    }

    /// `open(_:)` without blocking the caller: decides as the async `decide` does, and opens
    /// the sealed file on a thread of its own. Throws `locked` for a decision with
    /// `isKeyringLocked`.
    public func open(_ choice: BackendChoice = .automatic) async throws(CredentialVaultError) -> BackendSelection {
        let decision = try await decide(choice)
        if decision.isKeyringLocked { throw .locked }
        let store: any TokenStorageBackend
        switch decision.kind {
        case .secretService: store = SecretServiceStore(configuration: secretServiceConfiguration)
        case .file:
            store = try await SealedFileStore.openOrCreate(
                at: sealedFileURL, secret: .device, configuration: sealedFileConfiguration(for: decision))
        case .memory: store = memoryStore()
        // A directory opened and checked with fstat: a few system calls on a RAM file system,
        // as in the synchronous open; the reads themselves run on the store's thread.
        case .systemdCredentials: store = try systemdCredentialStore()
        // The portal's secret through its async call; the file is opened on the store's first use.
        case .libsecretFile: store = try await libsecretFileStore(for: decision)
        }
        return BackendSelection(decision: decision, store: store)
    }

    /// `unlockInteractively()` without blocking the caller (the store's async one: it waits for
    /// a person, up to `secretService.interactiveUnlockTimeout`; cancelling dismisses the prompt).
    public func unlockInteractively() async throws(CredentialVaultError) {
        try await SecretServiceStore(configuration: secretService).unlockInteractively()
    }

    /// `waitForUnlock(timeout:)` without blocking a thread: suspends between its questions,
    /// asks each through the store's async `status()`; throws `cancelled` when the task is
    /// cancelled.
    public func waitForUnlock(timeout: Duration) async throws(CredentialVaultError) -> SecretServiceStatus {
        let store = SecretServiceStore(configuration: secretService)
        let wait = UnlockWait(timeout: timeout, interval: unlockPollInterval)
        let first = try await KeyringProbe.asking(store)
        return try await wait.run(after: first) { () async throws(CredentialVaultError) in try await KeyringProbe.asking(store) }
            .unlockedStatus()
    }
}
