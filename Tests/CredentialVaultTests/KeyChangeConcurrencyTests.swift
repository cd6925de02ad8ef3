import Foundation
import Synchronization
import Testing

@testable import CredentialVault

/// A key change or rotation derives its keys (Argon2id: up to seconds) before it takes the
/// vault lock and the store's state, so reads of the same store go on meanwhile (issue 13: no
/// caller waits behind blocking work it did not ask for).
@Suite(.serialized) struct KeyChangeConcurrencyTests {
    let dir = TempDirectory()
    let key = CredentialKey(service: "s", account: "a")
    /// About a quarter of a second of Argon2id on this machine.
    let slow = try! KDFParameters(opsLimit: 2, memLimitBytes: 128 << 20)

    /// Runs `change` on a thread and loads from `store` until it is done; the slowest load.
    private func slowestLoadDuring(_ store: SealedFileStore, _ change: @escaping @Sendable () throws -> Void) throws -> (Duration, Duration) {
        let done = Atomic(false)
        let failure = Mutex<(any Error)?>(nil)
        let started = ContinuousClock.now
        let thread = Thread {
            do { try change() } catch { failure.withLock { $0 = error } }
            done.store(true, ordering: .releasing)
        }
        thread.start()
        var slowest = Duration.zero
        while !done.load(ordering: .acquiring) {
            let begin = ContinuousClock.now
            #expect(try store.load(key) == Data("v".utf8))
            slowest = max(slowest, ContinuousClock.now - begin)
        }
        if let error = failure.withLock({ $0 }) { throw error }
        return (slowest, ContinuousClock.now - started)
    }

    @Test func loadsDoNotWaitForTheKeyDerivationsOfAKeyChange() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("v".utf8), for: key, options: .portable)
        let (slowest, took) = try slowestLoadDuring(store) {
            try store.changeKey(from: .passphrase(TestVault.passphrase), to: .passphrase("new one"), kdf: slow)
        }
        #expect(took > .milliseconds(100), "the derivation took a while (\(took))")
        #expect(slowest < .milliseconds(50), "the slowest load during a \(took) key change took \(slowest)")
        _ = try SealedFileStore.open(at: store.url, key: .passphrase("new one"), configuration: TestVault.configuration(dir))
    }

    @Test func loadsDoNotWaitForTheKeyDerivationsOfARotation() throws {
        let store = try SealedFileStore.create(
            at: dir.path("v/slow.cvault"), key: .passphrase(TestVault.passphrase), kdf: slow, configuration: TestVault.configuration(dir))
        try store.save(Data("v".utf8), for: key, options: .portable)
        let (slowest, took) = try slowestLoadDuring(store) { try store.rotateDataKey(key: .passphrase(TestVault.passphrase)) }
        #expect(took > .milliseconds(100), "the derivations took a while (\(took))")
        #expect(slowest < .milliseconds(50), "the slowest load during a \(took) rotation took \(slowest)")
        #expect(try store.load(key) == Data("v".utf8))
    }

    @Test func aKeyChangedByAnotherProcessMeanwhileIsCheckedAgainUnderTheLock() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("v".utf8), for: key, options: .portable)
        let other = try SealedFileStore.open(at: store.url, key: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        try other.changeKey(from: .passphrase(TestVault.passphrase), to: .passphrase("theirs"), kdf: TestVault.kdf)
        // Our handle still knows the old wrapping; the old passphrase no longer unlocks the vault.
        #expect(throws: CredentialVaultError.wrongPassphrase) {
            try store.changeKey(from: .passphrase(TestVault.passphrase), to: .passphrase("mine"), kdf: TestVault.kdf)
        }
        _ = try SealedFileStore.open(at: store.url, key: .passphrase("theirs"), configuration: TestVault.configuration(dir))
    }
}
