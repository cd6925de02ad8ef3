import CredentialVault
import CredentialVaultSecretService
import Foundation
import Testing

/// `CredentialMigrator`: copy, verify, then delete; nothing lost, reruns complete.
@Suite struct MigrationTests {
    static func filled() throws -> InMemoryStore {
        let store = InMemoryStore()
        try store.save(Data([0, 1, 0xFF]), for: CredentialKey(service: "api", account: "alice", label: "Alice"))
        try store.save(Data("portable".utf8), for: CredentialKey(service: "api", account: "bob"), options: .portable)
        try store.save(Data("other".utf8), for: CredentialKey(service: "web", account: "carol"))
        try store.save(Data("verifier".utf8), for: CredentialKey(service: "api", account: "pkce"), options: .ephemeral())
        return store
    }

    @Test func movesEveryPersistentCredentialKeepingAccessibilityAndLabels() throws {
        let source = try Self.filled()
        let target = InMemoryStore()
        let report = try CredentialMigrator(from: source, to: target).migrate()
        #expect(report.migrated.count == 3)
        #expect(report.isComplete)
        #expect(try source.listKeys() == [])
        #expect(try source.load(CredentialKey(service: "api", account: "pkce")) == Data("verifier".utf8), "ephemeral stays")
        #expect(try target.load(CredentialKey(service: "api", account: "pkce")) == nil)
        #expect(try target.load(CredentialKey(service: "api", account: "alice")) == Data([0, 1, 0xFF]))
        #expect(try target.metadata(for: CredentialKey(service: "api", account: "alice"))?.key.label == "Alice")
        #expect(try target.metadata(for: CredentialKey(service: "api", account: "bob"))?.accessibility == .portable)
        #expect(try target.metadata(for: CredentialKey(service: "web", account: "carol"))?.accessibility == .deviceOnly)
    }

    @Test func deviceOnlyStaysWhenTheTargetLeavesThisMachine() throws {
        let source = try Self.filled()
        let target = InMemoryStore()
        let report = try CredentialMigrator(from: source, to: target, targetLeavesThisMachine: true).migrate()
        #expect(report.migrated.map(\.account) == ["bob"])
        #expect(Set(report.skippedDeviceOnly.map(\.account)) == ["alice", "carol"])
        #expect(!report.isComplete)
        #expect(try source.listKeys().map(\.account) == ["alice", "carol"])
    }

    @Test func conflictsStayUnlessOverwriteAndReRunsComplete() throws {
        let source = try Self.filled()
        let target = InMemoryStore()
        let alice = CredentialKey(service: "api", account: "alice")
        let carol = CredentialKey(service: "web", account: "carol")
        try target.save(Data("newer".utf8), for: alice)  // a different value: a conflict
        try target.save(Data("other".utf8), for: carol)  // the same value: an interrupted earlier run
        let first = try CredentialMigrator(from: source, to: target).migrate()
        #expect(first.conflicts == [alice])
        #expect(Set(first.migrated.map(\.account)) == ["bob", "carol"])
        #expect(try source.load(alice) == Data([0, 1, 0xFF]))
        #expect(try target.load(alice) == Data("newer".utf8))
        let second = try CredentialMigrator(from: source, to: target, overwrite: true).migrate()
        #expect(second.migrated == [CredentialKey(service: "api", account: "alice", label: "Alice")])
        #expect(try target.load(alice) == Data([0, 1, 0xFF]))
        #expect(try source.listKeys() == [])
    }

    @Test(.privateKeyring) func toAndFromTheSecretService() throws {
        let keyring = IsolatedSecretServiceStore()
        let source = try Self.filled()
        #expect(try CredentialMigrator(from: source, to: keyring.store).migrate().migrated.count == 3)
        #expect(try keyring.store.listKeys().count == 3)
        #expect(try keyring.store.metadata(for: CredentialKey(service: "api", account: "bob"))?.accessibility == .portable)
        let back = InMemoryStore()
        let report = try CredentialMigrator(from: keyring.store, to: back).migrate(service: "api")
        #expect(report.migrated.map(\.account) == ["alice", "bob"])
        #expect(try back.load(CredentialKey(service: "api", account: "alice")) == Data([0, 1, 0xFF]))
        #expect(try keyring.store.listKeys() == [CredentialKey(service: "web", account: "carol")])
    }
}
