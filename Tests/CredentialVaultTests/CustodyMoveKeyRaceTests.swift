import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredentialVault

/// A custody move derives its new wrapping (Argon2id) before it takes the vault lock. A key
/// change another process lands in between must not be undone by the move's write: the move's
/// key no longer unlocks the vault, so it fails as `changeSecret` does (`wrongPassphrase`), and
/// the other process's key stays the one that opens it. Ordered by a latch on the move's
/// first derivation (`beforePassphraseDerivation`), after it read the vault.
@Suite(.ownThread) struct CustodyMoveKeyRaceTests {
    let dir = TempDirectory()
    let key = CredentialKey(service: "custody.example", account: "a")

    @Test func aKeyChangedByAnotherProcessDuringACustodyMoveIsNotUndone() throws {
        let hold = Atomic(false)
        let entered = Arrivals()
        let release = DispatchSemaphore(value: 0)
        var held = TestVault.configuration(dir)
        held.rollbackCounter = false
        held.beforePassphraseDerivation = {
            guard hold.exchange(false, ordering: .acquiringAndReleasing) else { return }
            entered.arrive()
            release.wait()
        }
        let url = dir.path("vault/move.cvault")
        let store = try SealedFileStore.create(at: url, secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf, configuration: held)
        try store.save(Data("v".utf8), for: key, options: .portable)

        let outcome = Mutex<Result<Void, CredentialVaultError>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        hold.store(true, ordering: .releasing)
        Thread.detachNewThread {
            let result = Result { () throws(CredentialVaultError) in
                try store.changeCustody(to: .file, secret: .passphrase(TestVault.passphrase), rollbackCounter: true)
            }
            outcome.withLock { $0 = result }
            finished.signal()
        }
        #expect(entered.waitBlocking(for: 1), "the move read the vault and started deriving")
        // Another process changes the passphrase while the move derives.
        try SealedFileStore.open(at: url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
            .changeSecret(from: .passphrase(TestVault.passphrase), to: .passphrase("theirs"), kdf: TestVault.kdf)
        release.signal()
        finished.wait()

        #expect(outcome.withLock { $0.map { if case .failure(.wrongPassphrase) = $0 { true } else { false } } } == true,
            "the move fails with wrongPassphrase, got \(String(describing: outcome.withLock { $0 }))")
        let reopened = try SealedFileStore.open(at: url, secret: .passphrase("theirs"), configuration: TestVault.configuration(dir))
        #expect(try reopened.load(key) == Data("v".utf8), "the other process's key still opens the vault")
        #expect(throws: CredentialVaultError.wrongPassphrase, "the retired passphrase must not open it again") {
            _ = try SealedFileStore.open(at: url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        }
    }
}
