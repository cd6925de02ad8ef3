import CredentialVault
import CredentialVaultSecretService
import Foundation
import CredentialVaultTestSupport
import Testing

/// Values and keys round-trip exactly through a real gnome-keyring-daemon.
@Suite(.ownThread, .privateKeyring)
struct RoundTripTests {
    static let values: [(String, Data)] = [
        ("empty", Data()),
        ("one byte", Data([0x2A])),
        ("binary with NUL and 0xFF", Data([0x00, 0xFF, 0x00, 0x41, 0xFF, 0xFE, 0x00]) + Data((0...255).map { UInt8($0) })),
        ("1 MiB", Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })),
    ]

    @Test("values round-trip exactly", arguments: values)
    func roundTrip(_ name: String, _ value: Data) throws {
        let fixture = IsolatedSecretServiceStore()
        let key = CredentialKey(service: "api.example.com", account: "alice")
        try fixture.store.save(value, for: key)
        #expect(try fixture.store.load(key) == value, "\(name)")
    }

    @Test func unicodeServiceAndAccount() throws {
        let fixture = IsolatedSecretServiceStore()
        let key = CredentialKey(service: "сервис-☃-😀", account: "ユーザー")
        try fixture.store.save(Data("ключ".utf8), for: key)
        #expect(try fixture.store.load(key) == Data("ключ".utf8))
        #expect(try fixture.store.listKeys() == [key])
    }

    @Test func overwriteLeavesOneItemWithTheNewValue() throws {
        let fixture = IsolatedSecretServiceStore()
        let key = CredentialKey(service: "svc", account: "acct")
        for round in 0..<3 { try fixture.store.save(Data("value \(round)".utf8), for: key) }
        #expect(try fixture.store.load(key) == Data("value 2".utf8))
        #expect(try fixture.store.listKeys() == [key])
        // Exactly one item in the keyring: the older ones were deleted.
        let found = try SecretTool.search(service: fixture.prefix + "svc")
        #expect(found == 1)
    }

    @Test func deleteReportsWhetherThereWasACredential() throws {
        let fixture = IsolatedSecretServiceStore()
        let key = CredentialKey(service: "svc", account: "acct")
        #expect(try fixture.store.delete(key) == false)
        try fixture.store.save(Data("x".utf8), for: key)
        #expect(try fixture.store.delete(key) == true)
        #expect(try fixture.store.load(key) == nil)
        #expect(try fixture.store.delete(key) == false)
    }

    @Test func listIsSortedFilteredAndWithoutEphemeral() throws {
        let fixture = IsolatedSecretServiceStore()
        let b2 = CredentialKey(service: "b", account: "2")
        let a1 = CredentialKey(service: "a", account: "1")
        let b1 = CredentialKey(service: "b", account: "1")
        for key in [b2, a1, b1] { try fixture.store.save(Data("v".utf8), for: key) }
        try fixture.store.save(Data("nonce".utf8), for: CredentialKey(service: "a", account: "nonce"), options: .ephemeral())
        #expect(try fixture.store.listKeys() == [a1, b1, b2])
        #expect(try fixture.store.listKeys(service: "b") == [b1, b2])
        #expect(try fixture.store.listKeys(service: "missing") == [])
    }

    @Test func labelsAreKeptAndDefaultToAccountOnService() throws {
        let fixture = IsolatedSecretServiceStore()
        let labelled = CredentialKey(service: "svc", account: "a", label: "Work token")
        let plain = CredentialKey(service: "svc", account: "b")
        try fixture.store.save(Data("1".utf8), for: labelled)
        try fixture.store.save(Data("2".utf8), for: plain)
        let listed = try fixture.store.listKeys()
        #expect(listed.map(\.label) == ["Work token", nil])
        #expect(try fixture.store.metadata(for: plain)?.key.label == nil)
    }

    @Test func metadataReportsAccessibilityAndLifetime() throws {
        let fixture = IsolatedSecretServiceStore()
        let deviceOnly = CredentialKey(service: "svc", account: "device")
        let portable = CredentialKey(service: "svc", account: "portable")
        let ephemeral = CredentialKey(service: "svc", account: "ephemeral")
        try fixture.store.save(Data("1".utf8), for: deviceOnly)
        try fixture.store.save(Data("2".utf8), for: portable, options: .portable)
        try fixture.store.save(Data("3".utf8), for: ephemeral, options: .ephemeral())
        // The dates (the daemon's) are checked in SecretServiceMetadataDatesTests.
        func undated(_ key: CredentialKey) throws -> CredentialMetadata? {
            try fixture.store.metadata(for: key).map { CredentialMetadata(key: $0.key, accessibility: $0.accessibility, isEphemeral: $0.isEphemeral) }
        }
        #expect(try undated(deviceOnly) == CredentialMetadata(key: deviceOnly, accessibility: .deviceOnly, isEphemeral: false))
        #expect(try undated(portable) == CredentialMetadata(key: portable, accessibility: .portable, isEphemeral: false))
        #expect(try undated(ephemeral) == CredentialMetadata(key: ephemeral, accessibility: .deviceOnly, isEphemeral: true))
        #expect(try fixture.store.metadata(for: CredentialKey(service: "svc", account: "missing")) == nil)
    }

    @Test func stringConveniencesUseTheDefaultService() throws {
        let fixture = IsolatedSecretServiceStore()
        try fixture.store.save(key: "refresh_token", value: "r-123")
        #expect(try fixture.store.load(key: "refresh_token") == "r-123")
        #expect(try fixture.store.listKeys() == [CredentialKey(service: "credential-vault", account: "refresh_token")])
        try fixture.store.delete(key: "refresh_token")
        #expect(try fixture.store.load(key: "refresh_token") == nil)
    }

    @Test func deleteAllCountsKeysOfOneServiceOrAll() throws {
        let fixture = IsolatedSecretServiceStore()
        for account in ["1", "2", "3"] { try fixture.store.save(Data("v".utf8), for: CredentialKey(service: "x", account: account)) }
        try fixture.store.save(Data("v".utf8), for: CredentialKey(service: "y", account: "1"))
        try fixture.store.save(Data("v".utf8), for: CredentialKey(service: "y", account: "e"), options: .ephemeral())
        #expect(try fixture.store.deleteAll(service: "x") == 3)
        #expect(try fixture.store.listKeys() == [CredentialKey(service: "y", account: "1")])
        #expect(try fixture.store.deleteAll() == 2)
        #expect(try fixture.store.load(CredentialKey(service: "y", account: "e")) == nil)
    }

    @Test func invalidRequestsAreRefused() throws {
        let fixture = IsolatedSecretServiceStore()
        #expect {
            try fixture.store.save(Data(), for: CredentialKey(service: "", account: "a"))
        } throws: { error in
            guard case .invalidArgument = error as? CredentialVaultError else { return false }
            return true
        }
        let ephemeralPortable = StorageOptions(accessibility: .portable, lifetime: .ephemeral(ttl: .seconds(60)))
        do {
            try fixture.store.save(Data("v".utf8), for: CredentialKey(service: "s", account: "a"), options: ephemeralPortable)
            Issue.record("an ephemeral portable credential was accepted")
        } catch {
            guard case .invalidArgument = error else { Issue.record("unexpected \(error)"); return }
        }
    }

    @Test func statusSaysUnlockedAndWhere() throws {
        let status = try TestEnvironment.unscopedStore().status()
        #expect(status.isLocked == false)
        #expect(status.collectionPath.hasPrefix("/org/freedesktop/secrets/collection/"))
    }

    @Test func concurrentSavesOfOneKeyAllSucceedAndLeaveOneItem() async throws {
        let fixture = IsolatedSecretServiceStore()
        // The synchronous API, called from tasks (in async code the async overloads would be picked).
        let store = fixture.store.synchronous
        let key = CredentialKey(service: "contended", account: "token")
        let values = (0..<8).map { Data("writer \($0)".utf8) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for value in values { group.addTask { try store.save(value, for: key) } }
            try await group.waitForAll()
        }
        let final = try #require(try store.load(key))
        #expect(values.contains(final))
        #expect(try SecretTool.search(service: fixture.prefix + "contended") == 1, "the older items were all deleted")
    }

    @Test func sixteenConcurrentTasks() async throws {
        let fixture = IsolatedSecretServiceStore()
        // The synchronous API, called from tasks (in async code the async overloads would be picked).
        let store = fixture.store.synchronous
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask {
                    let key = CredentialKey(service: "concurrent", account: "task-\(task)")
                    for round in 0..<4 {
                        let value = Data("task \(task) round \(round)".utf8)
                        try store.save(value, for: key)
                        #expect(try store.load(key) == value)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.listKeys(service: "concurrent").count == 16)
    }
}
