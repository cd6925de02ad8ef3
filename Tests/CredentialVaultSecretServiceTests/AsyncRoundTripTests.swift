import CredentialVault
import CredentialVaultSecretService
import Foundation
import CredentialVaultTestSupport
import Testing

/// Every operation through the async API (`await`) against the real gnome-keyring-daemon:
/// the same answers as the synchronous API, which reads back what the async one wrote.
@Suite(.ownThread, .privateKeyring)
struct AsyncRoundTripTests {
    @Test func saveLoadTakeDeleteThroughAwait() async throws {
        let fixture = IsolatedSecretServiceStore()
        let store = fixture.store
        let key = CredentialKey(service: "api.example.com", account: "alice")
        let value = Data([0x00, 0xFF, 0x41]) + Data("token".utf8)
        #expect(try await store.load(key) == nil)
        try await store.save(value, for: key)
        #expect(try await store.load(key) == value)
        #expect(try store.synchronous.load(key) == value, "the sync API reads what the async one wrote")
        try await store.save(Data("newer".utf8), for: key, options: StorageOptions(accessibility: .portable))
        #expect(try await store.metadata(for: key)?.accessibility == .portable)
        #expect(try await store.take(key) == Data("newer".utf8))
        #expect(try await store.take(key) == nil)
        try await store.save(value, for: key)
        #expect(try await store.delete(key) == true)
        #expect(try await store.delete(key) == false)
        #expect(try await store.metadata(for: key) == nil)
    }

    @Test func ephemeralListMetadataAndDeleteAllThroughAwait() async throws {
        let fixture = IsolatedSecretServiceStore()
        let store = fixture.store
        let a1 = CredentialKey(service: "a", account: "1")
        let b1 = CredentialKey(service: "b", account: "1")
        let nonce = CredentialKey(service: "a", account: "nonce")
        try await store.save(Data("v".utf8), for: b1)
        try await store.save(Data("v".utf8), for: a1)
        try await store.save(Data("n".utf8), for: nonce, options: .ephemeral())
        #expect(try await store.listKeys() == [a1, b1], "ephemeral credentials are never listed")
        #expect(try await store.listKeys(service: "b") == [b1])
        let metadata = try #require(try await store.metadata(for: nonce))
        #expect(metadata.isEphemeral && metadata.accessibility == .deviceOnly)
        #expect(try await store.take(nonce) == Data("n".utf8))
        #expect(try await store.deleteAll(service: "a") == 1)
        #expect(try await store.listKeys() == [b1])
        #expect(try await store.deleteAll() == 1)
        #expect(try await store.listKeys().isEmpty)
    }

    @Test func stringConveniencesStatusAndErrorsThroughAwait() async throws {
        let fixture = IsolatedSecretServiceStore()
        let store = fixture.store
        try await store.save(key: "session", value: "{\"user\":\"alice\"}")
        #expect(try await store.load(key: "session") == "{\"user\":\"alice\"}")
        try await store.delete(key: "session")
        #expect(try await store.load(key: "session") == nil)
        let status = try await store.status()
        #expect(!status.isLocked && status.collectionPath.hasPrefix("/org/freedesktop/secrets/collection/"))
        try await store.unlockInteractively()  // already unlocked: returns at once, no prompt
        await #expect {
            try await store.save(Data("x".utf8), for: CredentialKey(service: "nul\u{0}here", account: "a"))
        } throws: { error in
            guard case .invalidArgument = error as? CredentialVaultError else { return false }
            return true
        }
    }
}
