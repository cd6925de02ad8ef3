import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// The conditions a caller branches on have cases of their own: a store made stale by another
/// process is `reopenRequired` with its reason (never `locked`, whose advice "unlock it" would be
/// wrong), something that exists already is `alreadyExists` (never `invalidArgument`), and
/// `openOrCreate` relies on that case alone.
@Suite final class PreciseErrorCaseTests {
    let dir = TempDirectory()
    let key = CredentialKey(service: "errors.example", account: "a")

    private func other(_ url: URL, secret: VaultSecret = .passphrase(TestVault.passphrase)) throws -> SealedFileStore {
        try SealedFileStore.open(at: url, secret: secret, configuration: TestVault.configuration(dir))
    }

    @Test func aStoreWhoseDataKeyAnotherProcessRotatedMustBeReopened() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("v".utf8), for: key, options: .portable)
        try other(store.url).rotateDataKey(secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf)
        #expect(throws: CredentialVaultError.reopenRequired(.keyChanged)) { _ = try store.load(key) }
        #expect(throws: CredentialVaultError.reopenRequired(.keyChanged)) { try store.save(Data("w".utf8), for: key, options: .portable) }
        #expect(try other(store.url).load(key) == Data("v".utf8), "nothing was changed; a new store reads it")
    }

    @Test func aStoreMovedToACounterByAnotherProcessMustBeReopened() throws {
        var plain = TestVault.configuration(dir)
        plain.rollbackCounter = false
        let store = try SealedFileStore.create(at: dir.path("vault/plain.cvault"), secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf, configuration: plain)
        try store.save(Data("v".utf8), for: key, options: .portable)
        try SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: plain)
            .changeCustody(to: .file, secret: .passphrase(TestVault.passphrase), rollbackCounter: true)
        #expect(throws: CredentialVaultError.reopenRequired(.custodyChanged)) { _ = try store.load(key) }
    }

    @Test func aVaultReplacedByAnotherAtItsPathMustBeReopened() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("v".utf8), for: key, options: .portable)
        let url = store.url
        #expect(rename(url.path, url.path + ".before") == 0)
        _ = try SealedFileStore.create(at: url, secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf, configuration: TestVault.configuration(dir))
        #expect(throws: CredentialVaultError.reopenRequired(.replaced)) { _ = try store.load(key) }
        #expect(throws: CredentialVaultError.reopenRequired(.replaced)) { try store.save(Data("w".utf8), for: key, options: .portable) }
        #expect(try other(url).load(key) == nil, "the new vault was not written by the stale store")
    }

    @Test func creatingOverAnExistingVaultSaysItExists() throws {
        let store = try TestVault.create(dir)
        let error = #expect(throws: CredentialVaultError.self) {
            try SealedFileStore.create(at: store.url, secret: .passphrase("another"), kdf: TestVault.kdf, configuration: TestVault.configuration(dir))
        }
        guard case .alreadyExists(let what)? = error else {
            Issue.record("expected alreadyExists, got \(String(describing: error))")
            return
        }
        #expect(what.contains(store.url.path))
    }

    /// Every message says what to do: for a vault or key file that exists, use it or choose
    /// another path (the fleet's host and schema say theirs).
    @Test func whatExistsAlreadyIsReportedWithWhatToDo() throws {
        let store = try TestVault.create(dir)
        let vault = #expect(throws: CredentialVaultError.self) {
            try SealedFileStore.create(at: store.url, secret: .passphrase("another"), kdf: TestVault.kdf, configuration: TestVault.configuration(dir))
        }
        let keyFile = try TestVault.keyFile(dir)
        let key = #expect(throws: CredentialVaultError.self) { try VaultSecret.createKeyFile(at: keyFile) }
        for error in [vault, key].compactMap({ $0 }) {
            #expect(error.description.contains("another path"), "\(error)")
        }
    }

    @Test func openOrCreateOpensTheVaultThatExists() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("kept".utf8), for: key, options: .portable)
        let opened = try SealedFileStore.openOrCreate(
            at: store.url, secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf, configuration: TestVault.configuration(dir))
        #expect(try opened.load(key) == Data("kept".utf8))
    }
}
