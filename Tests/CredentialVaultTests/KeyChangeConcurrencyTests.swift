import Foundation
import Synchronization
import Testing
import CredentialVaultTestSupport

@testable import CredentialVault

/// A key change or rotation derives its keys (Argon2id: up to seconds) before it takes the
/// vault lock and the store's state, so reads of the same store go on meanwhile: no caller waits
/// behind blocking work it did not ask for. Shown with the derivation held on a latch: a load
/// must answer while it is held (had it waited, it would wait for ever).
@Suite(.ownThread) struct KeyChangeConcurrencyTests {
    let dir = TempDirectory()
    let key = CredentialKey(service: "s", account: "a")

    /// A configuration whose passphrase derivations, once `hold` is set, each arrive at
    /// `entered` and wait for `release`.
    private final class HeldDerivations: Sendable {
        let hold = Atomic(false)
        let entered = Arrivals()
        let release = DispatchSemaphore(value: 0)

        func configuration(_ dir: TempDirectory) -> SealedFileConfiguration {
            var configuration = TestVault.configuration(dir)
            configuration.beforePassphraseDerivation = { [self] in
                guard hold.load(ordering: .acquiring) else { return }
                entered.arrive()
                release.wait()
            }
            return configuration
        }
    }

    /// Runs `change` on a thread of its own with its first derivation held, loads from `store`
    /// while it is held, then lets the change finish.
    private func loadAnswersWhileADerivationIsHeld(
        _ store: SealedFileStore, _ derivations: HeldDerivations, _ change: @escaping @Sendable () throws -> Void
    ) throws {
        let failure = Mutex<(any Error)?>(nil)
        let finished = DispatchSemaphore(value: 0)
        derivations.hold.store(true, ordering: .releasing)
        Thread.detachNewThread {
            do { try change() } catch { failure.withLock { $0 = error } }
            finished.signal()
        }
        #expect(derivations.entered.waitBlocking(for: 1), "the change started deriving its key")
        let loaded = withinDeadline(.seconds(60), "a load while a key derivation is held") { try? store.load(key) }
        #expect(loaded == Data("v".utf8), "the load answered while the derivation was held")
        derivations.hold.store(false, ordering: .releasing)
        derivations.release.signal()
        finished.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    @Test func loadsDoNotWaitForTheKeyDerivationsOfAKeyChange() throws {
        let derivations = HeldDerivations()
        let store = try SealedFileStore.create(
            at: dir.path("v/change.cvault"), secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf,
            configuration: derivations.configuration(dir))
        try store.save(Data("v".utf8), for: key, options: .portable)
        try loadAnswersWhileADerivationIsHeld(store, derivations) {
            try store.changeSecret(from: .passphrase(TestVault.passphrase), to: .passphrase("new one"), kdf: TestVault.kdf)
        }
        _ = try SealedFileStore.open(at: store.url, secret: .passphrase("new one"), configuration: TestVault.configuration(dir))
    }

    @Test func loadsDoNotWaitForTheKeyDerivationsOfARotation() throws {
        let derivations = HeldDerivations()
        let store = try SealedFileStore.create(
            at: dir.path("v/rotation.cvault"), secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf,
            configuration: derivations.configuration(dir))
        try store.save(Data("v".utf8), for: key, options: .portable)
        try loadAnswersWhileADerivationIsHeld(store, derivations) { try store.rotateDataKey(secret: .passphrase(TestVault.passphrase)) }
        #expect(try store.load(key) == Data("v".utf8))
    }

    @Test func aKeyChangedByAnotherProcessMeanwhileIsCheckedAgainUnderTheLock() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("v".utf8), for: key, options: .portable)
        let other = try SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        try other.changeSecret(from: .passphrase(TestVault.passphrase), to: .passphrase("theirs"), kdf: TestVault.kdf)
        // Our handle still knows the old wrapping; the old passphrase no longer unlocks the vault.
        #expect(throws: CredentialVaultError.wrongPassphrase) {
            try store.changeSecret(from: .passphrase(TestVault.passphrase), to: .passphrase("mine"), kdf: TestVault.kdf)
        }
        _ = try SealedFileStore.open(at: store.url, secret: .passphrase("theirs"), configuration: TestVault.configuration(dir))
    }
}
