import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVault

/// A passphrase change keeps the data key: a store object another process opened before it is
/// not stale, and never told to reopen.
@Suite final class SecretChangeElsewhereTests {
    let dir = TempDirectory()
    let key = CredentialKey(service: "errors.example", account: "a")

    @Test func aStoreOpenedBeforeAnotherProcessChangedThePassphraseGoesOnReadingAndSaving() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("v".utf8), for: key, options: .portable)
        try SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
            .changeSecret(from: .passphrase(TestVault.passphrase), to: .passphrase("theirs"), kdf: TestVault.kdf)
        #expect(try store.load(key) == Data("v".utf8))
        try store.save(Data("w".utf8), for: key, options: .portable)
        let reopened = try SealedFileStore.open(at: store.url, secret: .passphrase("theirs"), configuration: TestVault.configuration(dir))
        #expect(try reopened.load(key) == Data("w".utf8), "the save landed, and the new passphrase still opens the vault")
    }
}
