import CredentialVault
import CredentialVaultSecretService
import CredentialVaultTestSupport
import CredentialVaultTesting
import Foundation
import Testing

/// `CredentialMigrator`: copy, verify, then delete; nothing lost, reruns complete.
@Suite(.ownThread) struct MigrationTests {
    static func filled() throws -> InMemoryStore {
        let store = InMemoryStore()
        try store.save(Data([0, 1, 0xFF]), for: CredentialKey(service: "api", account: "alice", label: "Alice"))
        try store.save(Data("portable".utf8), for: CredentialKey(service: "api", account: "bob"), options: .portable)
        try store.save(Data("other".utf8), for: CredentialKey(service: "web", account: "carol"))
        try store.save(Data("verifier".utf8), for: CredentialKey(service: "api", account: "pkce"), options: .ephemeral())
        return store
    }

    @Test func movesEveryPersistentCredentialKeepingAccessibilityAndLabels() async throws {
        let source = try Self.filled()
        let target = InMemoryStore()
        let report = try await CredentialMigrator(from: source, to: target).migrate()
        #expect(report.migrated.count == 3)
        #expect(report.isComplete)
        #expect(try await source.listKeys() == [])
        #expect(try await source.load(CredentialKey(service: "api", account: "pkce")) == Data("verifier".utf8), "ephemeral stays")
        #expect(try await target.load(CredentialKey(service: "api", account: "pkce")) == nil)
        #expect(try await target.load(CredentialKey(service: "api", account: "alice")) == Data([0, 1, 0xFF]))
        #expect(try await target.metadata(for: CredentialKey(service: "api", account: "alice"))?.key.label == "Alice")
        #expect(try await target.metadata(for: CredentialKey(service: "api", account: "bob"))?.accessibility == .portable)
        #expect(try await target.metadata(for: CredentialKey(service: "web", account: "carol"))?.accessibility == .deviceOnly)
    }

    @Test func countsTheCredentialsHandledOfTheListedTotal() async throws {
        let source = try Self.filled()
        var counts: [String] = []
        let report = try await CredentialMigrator(from: source, to: InMemoryStore(), targetLeavesThisMachine: true)
            .migrate(service: "api", counted: { done, total in counts.append("\(done)/\(total)") })
        #expect(report.migrated.count + report.skippedDeviceOnly.count == 2)
        #expect(counts == ["0/2", "1/2", "2/2"], "skipped ones are counted too: the total is what was listed")
    }

    @Test func deviceOnlyStaysWhenTheTargetLeavesThisMachine() async throws {
        let source = try Self.filled()
        let target = InMemoryStore()
        let report = try await CredentialMigrator(from: source, to: target, targetLeavesThisMachine: true).migrate()
        #expect(report.migrated.map(\.account) == ["bob"])
        #expect(Set(report.skippedDeviceOnly.map(\.account)) == ["alice", "carol"])
        #expect(!report.isComplete)
        #expect(try await source.listKeys().map(\.account) == ["alice", "carol"])
    }

    @Test func conflictsStayUnlessOverwriteAndReRunsComplete() async throws {
        let source = try Self.filled()
        let target = InMemoryStore()
        let alice = CredentialKey(service: "api", account: "alice")
        let carol = CredentialKey(service: "web", account: "carol")
        try await target.save(Data("newer".utf8), for: alice)  // a different value: a conflict
        try await target.save(Data("other".utf8), for: carol)  // the same value: an interrupted earlier run
        let first = try await CredentialMigrator(from: source, to: target).migrate()
        #expect(first.conflicts == [alice])
        #expect(Set(first.migrated.map(\.account)) == ["bob", "carol"])
        #expect(try await source.load(alice) == Data([0, 1, 0xFF]))
        #expect(try await target.load(alice) == Data("newer".utf8))
        let second = try await CredentialMigrator(from: source, to: target, overwrite: true).migrate()
        #expect(second.migrated == [CredentialKey(service: "api", account: "alice", label: "Alice")])
        #expect(try await target.load(alice) == Data([0, 1, 0xFF]))
        #expect(try await source.listKeys() == [])
    }

    @Test(.privateKeyring) func toAndFromTheSecretService() async throws {
        let isolated = IsolatedSecretServiceStore()
        let keyring = isolated.store
        let source = try Self.filled()
        #expect(try await CredentialMigrator(from: source, to: keyring).migrate().migrated.count == 3)
        #expect(try await keyring.listKeys().count == 3)
        #expect(try await keyring.metadata(for: CredentialKey(service: "api", account: "bob"))?.accessibility == .portable)
        let back = InMemoryStore()
        let report = try await CredentialMigrator(from: keyring, to: back).migrate(service: "api")
        #expect(report.migrated.map(\.account) == ["alice", "bob"])
        #expect(try await back.load(CredentialKey(service: "api", account: "alice")) == Data([0, 1, 0xFF]))
        #expect(try await keyring.listKeys() == [CredentialKey(service: "web", account: "carol")])
        withExtendedLifetime(isolated) {}  // its cleanup runs when it goes
    }

    @Test func aLockedSourceStopsTheMigrationAndNothingIsDeleted() async throws {
        let filled = try Self.filled()
        let source = FaultInjectingStore(wrapping: filled)
        source.inject(.fail(.locked), into: .load)
        let target = InMemoryStore()
        await #expect(throws: CredentialVaultError.locked) { _ = try await CredentialMigrator(from: source, to: target).migrate() }
        #expect(try await filled.listKeys().count == 3)
        #expect(try await target.listKeys().isEmpty)
    }

    /// Cancelled while the target stalls a save for an hour, the migration ends with
    /// `cancelled` (the ceiling only says that it ended at all) and nothing left the source.
    @Test func aCancelledMigrationStopsWithNothingLost() async throws {
        let filled = try Self.filled()
        let stalling = FaultInjectingStore()
        stalling.inject(.stall(.seconds(3600)), into: .save)
        let target = ArrivingStore(stalling)
        let migration = Task { try await CredentialMigrator(from: filled, to: target).migrate() }
        #expect(await target.saves.reached(1), "the migration reached the target's save")
        migration.cancel()
        let result = try await withCeiling(.seconds(120), "a migration cancelled in an hour-long save") { await migration.result }
        #expect(throws: CredentialVaultError.cancelled) { try result.get() }
        #expect(try await filled.listKeys().count == 3, "nothing left the source")
    }
}
