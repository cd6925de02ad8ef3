import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultSecretService

/// A writer without the key can rearrange what the MAC does not cover (the attribute hashes
/// outside each item): none of it makes a lookup of one key return another key's secret.
@Suite(.ownThread) struct LibsecretFileItemSwapTests {
    let alice = CredentialKey(service: "api.example.com", account: "alice")
    let bob = CredentialKey(service: "api.example.com", account: "bob")

    /// Two items of the file and the store that wrote them, alice's first.
    func twoItems() throws -> (file: SecretToolFile, store: LibsecretFileStore, contents: KeyringFileContents) {
        let file = SecretToolFile()
        let store = try file.store()
        try store.synchronous.save(Data("alice's".utf8), for: alice)
        try store.synchronous.save(Data("bob's".utf8), for: bob)
        return (file, store, try KeyringFileContents.parse(try file.bytes()))
    }

    @Test func anotherItemsBlobUnderAKeysHashesIsTamperedNotTheOtherSecret() throws {
        var (file, store, contents) = try twoItems()
        contents.items[0].blob = contents.items[1].blob
        try file.write(contents.serialized())
        expectThrows({ (error: CredentialVaultError) in error == .tampered }) { try store.synchronous.load(alice) }
        expectThrows({ (error: CredentialVaultError) in error == .tampered }) { try store.synchronous.take(alice) }
    }

    @Test func anotherKeysHashCopiedIntoAnItemIsTamperedNotTheOtherSecret() throws {
        var (file, store, contents) = try twoItems()
        let username = try #require(contents.items[0].hashedAttributes.firstIndex { $0.name == "username" })
        contents.items[1].hashedAttributes[username].mac = contents.items[0].hashedAttributes[username].mac
        try file.write(contents.serialized())
        expectThrows({ (error: CredentialVaultError) in error == .tampered }) { try store.synchronous.load(alice) }
    }

    @Test func aHashRepeatedInPlaceOfAnotherAttributeIsTampered() throws {
        var (file, store, contents) = try twoItems()
        // Same count of hashes outside as attributes inside, one of them hidden by a repeat.
        let service = try #require(contents.items[0].hashedAttributes.firstIndex { $0.name == "service" })
        let hidden = try #require(contents.items[0].hashedAttributes.firstIndex { $0.name == "xdg:schema" })
        contents.items[0].hashedAttributes[hidden] = contents.items[0].hashedAttributes[service]
        try file.write(contents.serialized())
        let loaded = Result { () throws(CredentialVaultError) in try store.synchronous.load(alice) }
        #expect(throws: CredentialVaultError.tampered) { try loaded.get() }
    }
}
