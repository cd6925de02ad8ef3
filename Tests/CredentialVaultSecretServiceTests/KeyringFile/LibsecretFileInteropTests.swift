import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultSecretService

/// The keyring file shared with Debian's `secret-tool` (libsecret 0.20.5's file backend): what
/// one writes the other reads, replaces and deletes.
@Suite(.ownThread) struct LibsecretFileInteropTests {
    let key = CredentialKey(service: "api.example.com", account: "alice")
    var identity: [String: String] { ["service": key.service, "username": key.account] }

    @Test func aSecretStoredBySecretToolIsReadHere() async throws {
        let file = SecretToolFile()
        #expect(try await file.store("from libsecret", attributes: identity))
        let store = try file.store()
        #expect(try store.synchronous.load(key) == Data("from libsecret".utf8))
        #expect(try store.synchronous.listKeys() == [key])
        #expect(try store.synchronous.metadata(for: key)?.accessibility == .deviceOnly)
    }

    @Test func aCredentialSavedHereIsFoundBySecretToolWithTheSecretServiceAttributes() async throws {
        let file = SecretToolFile()
        try file.store().synchronous.save(Data("from swift".utf8), for: key, options: .portable)
        #expect(try await file.lookup(identity) == "from swift")
        let (count, listing) = try await file.search(identity)
        #expect(count == 1)
        for line in [
            // secret-tool shows the `xdg:schema` attribute as the item's schema.
            "schema = org.credentialvault.Credential", "attribute.credential-vault:application = credential-vault",
            "attribute.credential-vault:accessibility = portable", "label = alice on api.example.com",
        ] {
            #expect(listing.contains(line), "\(listing)")
        }
    }

    @Test func aSaveReplacesSecretToolsItemAndSecretToolReplacesOurs() async throws {
        let file = SecretToolFile()
        let store = try file.store()
        #expect(try await file.store("first", attributes: identity))
        try store.synchronous.save(Data("second".utf8), for: key)
        // libsecret's lookup returns the first matching item: one item left, ours.
        #expect(try await file.search(identity).count == 1)
        #expect(try await file.lookup(identity) == "second")
        // secret-tool with our whole attribute set replaces our item in place.
        var ours = identity
        ours["xdg:schema"] = "org.credentialvault.Credential"
        ours["credential-vault:application"] = "credential-vault"
        ours["credential-vault:accessibility"] = "device-only"
        #expect(try await file.store("third", attributes: ours))
        #expect(try await file.search(identity).count == 1)
        #expect(try store.synchronous.load(key) == Data("third".utf8))
    }

    @Test func deletesReachTheOtherSide() async throws {
        let file = SecretToolFile()
        let store = try file.store()
        #expect(try await file.store("to delete", attributes: identity))
        #expect(try store.synchronous.delete(key))
        #expect(try await file.lookup(identity) == nil)
        try store.synchronous.save(Data("to clear".utf8), for: key)
        try await file.clear(identity)
        #expect(try store.synchronous.load(key) == nil)
        #expect(try store.synchronous.listKeys().isEmpty)
    }

    /// oo7 adds `xdg:content-type`: such an item is ours to read, replace and delete (libsecret's
    /// own replace, which needs the whole set equal, would duplicate it).
    @Test func anItemWithOurAttributesAndAContentTypeIsReplacedNotDuplicated() async throws {
        let file = SecretToolFile()
        let store = try file.store()
        var oo7Style = identity
        oo7Style["xdg:content-type"] = "text/plain"
        #expect(try await file.store("written by oo7", attributes: oo7Style))
        #expect(try store.synchronous.load(key) == Data("written by oo7".utf8))
        try store.synchronous.save(Data("replaced".utf8), for: key)
        #expect(try await file.search(identity).count == 1)
        #expect(try await file.lookup(identity) == "replaced")
        #expect(try store.synchronous.delete(key))
        #expect(try await file.search(identity).count == 0)
    }

    @Test func aWriteNeverLeavesLibsecretsBackupOfDeletedSecrets() async throws {
        let file = SecretToolFile()
        #expect(try await file.store("one", attributes: identity))
        #expect(try await file.store("two", attributes: ["service": "other", "username": "bob"]))
        let backup = file.path + "~"
        #expect(FileManager.default.fileExists(atPath: backup), "libsecret leaves the previous version")
        try file.store().synchronous.delete(key)
        #expect(!FileManager.default.fileExists(atPath: backup))
        #expect(try await file.lookup(["service": "other", "username": "bob"]) == "two")
    }

    /// secret-tool writes between this store's read and its rename: the write is made again on
    /// the new file, whose item is kept.
    @Test func aFileChangedByAnotherWriterDuringAWriteKeepsTheirItem() async throws {
        let file = SecretToolFile()
        let store = try file.store()
        try store.synchronous.save(Data("before".utf8), for: key)
        let theirs = ["service": "their.example", "username": "carol"]
        let interloper = SecretToolInterloper(file: file, attributes: theirs)
        store.runBeforeReplacing { interloper.storeOnce() }
        try store.synchronous.save(Data("after".utf8), for: key)
        store.runBeforeReplacing(nil)
        // Once per attempt: the first found the file changed, the second wrote.
        #expect(interloper.calls == 2)
        #expect(try store.synchronous.load(key) == Data("after".utf8))
        #expect(try await file.lookup(theirs) == "theirs")
        #expect(try await file.lookup(identity) == "after")
    }
}
