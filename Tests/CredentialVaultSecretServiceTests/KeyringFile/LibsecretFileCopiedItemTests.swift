import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultSecretService

/// Whoever can write the keyring file without its key can still copy a valid item many times:
/// a lookup decrypts one copy, and the credential goes with all of its copies.
@Suite(.ownThread) struct LibsecretFileCopiedItemTests {
    let key = CredentialKey(service: "api.example.com", account: "alice")
    let copies = 40

    /// A file holding `copies` more exact copies of the key's item, and its store.
    func copiedFile(ephemeral: Bool = false) throws -> (file: SecretToolFile, store: LibsecretFileStore) {
        let file = SecretToolFile()
        let store = try file.store()
        let options = ephemeral ? StorageOptions(lifetime: .ephemeral(ttl: .seconds(3600))) : StorageOptions()
        try store.synchronous.save(Data("alice's".utf8), for: key, options: options)
        var contents = try KeyringFileContents.parse(try file.bytes())
        let item = try #require(contents.items.first)
        contents.items += Array(repeating: item, count: copies)
        try file.write(contents.serialized())
        return (file, store)
    }

    @Test func aLookupDecryptsOneOfTheCopiesOfAnItem() throws {
        let (file, store) = try copiedFile()
        let counted = DecryptionCount()
        let value = try OpenedKeyring.$decryptions.withValue(counted) { try store.synchronous.load(key) }
        withExtendedLifetime(file) {}  // its directory goes with it
        #expect(value == Data("alice's".utf8))
        #expect(counted.count.load(ordering: .relaxed) == 1)
    }

    @Test func theExpiryOfCopiesOfAnEphemeralItemIsCheckedOnce() throws {
        let (file, store) = try copiedFile(ephemeral: true)
        let counted = DecryptionCount()
        try OpenedKeyring.$decryptions.withValue(counted) { try store.synchronous.save(Data("bob's".utf8), for: CredentialKey(service: "api.example.com", account: "bob")) }
        withExtendedLifetime(file) {}  // its directory goes with it
        // One for the expiry check of the copies; bob has no item yet.
        #expect(counted.count.load(ordering: .relaxed) == 1)
    }

    @Test func aDeletedCredentialDoesNotComeBackFromACopy() throws {
        let (file, store) = try copiedFile()
        _ = try store.synchronous.delete(key)
        #expect(try store.synchronous.load(key) == nil)
        #expect(try KeyringFileContents.parse(try file.bytes()).items.isEmpty)
    }

    @Test func aSaveReplacesEveryCopy() throws {
        let (file, store) = try copiedFile()
        try store.synchronous.save(Data("new".utf8), for: key)
        #expect(try store.synchronous.load(key) == Data("new".utf8))
        #expect(try KeyringFileContents.parse(try file.bytes()).items.count == 1)
    }
}
