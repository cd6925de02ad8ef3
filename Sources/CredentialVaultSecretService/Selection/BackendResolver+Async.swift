import CredentialVault
import Foundation

extension BackendResolver {
    /// `decide(_:)` without blocking the caller: the Secret Service is asked on a thread of its
    /// own (`SecretServiceStore.status()` is synchronous), and a wait for unlock
    /// (`.waitForUnlock(timeout:)`) suspends between its questions. Cancelling the task throws
    /// `cancelled` at the next pause, or once the question in flight returns (within
    /// `secretService.timeout`).
    public func decide(_ choice: BackendChoice = .automatic) async throws(CredentialVaultError) -> BackendDecision {
        if let decided = try decideWithoutAsking(choice) { return decided }
        var probe = try await probeStatusDetached()
        if case .locked = probe, case .waitForUnlock(let timeout) = lockedKeyring {
            probe = try await UnlockWait(timeout: timeout, interval: unlockPollInterval).run(after: probe, probe: probeStatusDetached)
        }
        return automatic(probe)
    }

    /// `open(_:)` without blocking the caller: decides as the async `decide` does, and opens
    /// the sealed file on a thread of its own. Throws `locked` for a decision with
    /// `isKeyringLocked`.
    public func open(_ choice: BackendChoice = .automatic) async throws(CredentialVaultError) -> BackendSelection {
        let decision = try await decide(choice)
        if decision.isKeyringLocked { throw .locked }
        let store: any TokenStorageAdapter
        switch decision.kind {
        case .secretService: store = SecretServiceStore(configuration: secretService)
        case .file: store = try await SealedFileStore.openOrCreate(at: sealedFileURL, key: .device, configuration: sealedFile)
        case .memory: store = memoryStore()
        }
        return BackendSelection(decision: decision, store: store)
    }

    /// `unlockInteractively()` on a thread of its own (it waits for a person, up to
    /// `secretService.interactiveUnlockTimeout`).
    public func unlockInteractively() async throws(CredentialVaultError) {
        let configuration = secretService
        try await StoreThreads.detached(name: "credvault-unlock") { _ throws(CredentialVaultError) in
            try SecretServiceStore(configuration: configuration).unlockInteractively()
        }
    }

    /// `waitForUnlock(timeout:)` without blocking a thread: suspends between its questions,
    /// asks each on a thread of its own; throws `cancelled` when the task is cancelled.
    public func waitForUnlock(timeout: Duration) async throws(CredentialVaultError) -> SecretServiceStatus {
        let wait = UnlockWait(timeout: timeout, interval: unlockPollInterval)
        return try await wait.run(after: try await probeStatusDetached(), probe: probeStatusDetached).unlockedStatus()
    }

    /// `probeStatus()` on a thread of its own: the D-Bus call may take up to the timeout.
    private func probeStatusDetached() async throws(CredentialVaultError) -> KeyringProbe {
        let resolver = self
        return try await StoreThreads.detached(name: "credvault-status") { _ in resolver.probeStatus() }
    }
}
