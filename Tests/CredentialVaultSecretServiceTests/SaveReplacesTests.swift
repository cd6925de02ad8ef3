import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultSecretService
import Foundation
import Testing

/// A save writes the key's item in place (`CreateItem` with replace) and removes every other
/// item of the key, whoever wrote it and wherever it is: exactly one item is left.
@Suite(.ownThread, .privateKeyring)
struct SaveReplacesTests {
    @Test func repeatedSavesKeepOneItemAtTheSamePath() throws {
        let fixture = IsolatedSecretServiceStore()
        let key = CredentialKey(service: "svc", account: "acct")
        try fixture.store.save(Data("one".utf8), for: key)
        let first = try KeyItems.paths(key, prefix: fixture.prefix, store: fixture.store)
        try fixture.store.save(Data("two".utf8), for: CredentialKey(service: "svc", account: "acct", label: "Renamed"))
        // Replaced in place: the same object path, the new value and label.
        #expect(try KeyItems.paths(key, prefix: fixture.prefix, store: fixture.store) == first)
        #expect(first.count == 1)
        #expect(try fixture.store.load(key) == Data("two".utf8))
        #expect(try fixture.store.listKeys().map(\.label) == ["Renamed"])
    }

    @Test func switchingAccessibilityLeavesExactlyOneItem() throws {
        let fixture = IsolatedSecretServiceStore()
        let key = CredentialKey(service: "svc", account: "acct")
        for (round, options) in [StorageOptions.default, .portable, .default, .portable].enumerated() {
            try fixture.store.save(Data("value \(round)".utf8), for: key, options: options)
            #expect(try KeyItems.paths(key, prefix: fixture.prefix, store: fixture.store).count == 1, "round \(round)")
            #expect(try fixture.store.metadata(for: key)?.accessibility == options.accessibility, "round \(round)")
            #expect(try fixture.store.load(key) == Data("value \(round)".utf8), "round \(round)")
        }
    }

    @Test func switchingBetweenEphemeralAndPersistentLeavesExactlyOneItem() throws {
        let fixture = IsolatedSecretServiceStore()
        let key = CredentialKey(service: "svc", account: "acct")
        for (round, options) in [StorageOptions.default, .ephemeral(), .ephemeral(), .default, .default].enumerated() {
            try fixture.store.save(Data("value \(round)".utf8), for: key, options: options)
            #expect(try KeyItems.paths(key, prefix: fixture.prefix, store: fixture.store).count == 1, "round \(round)")
            #expect(try fixture.store.metadata(for: key)?.isEphemeral == options.lifetime.isEphemeral, "round \(round)")
            #expect(try fixture.store.load(key) == Data("value \(round)".utf8), "round \(round)")
        }
    }

    @Test func duplicatesLeftByOlderVersionsAreRemoved() throws {
        let fixture = IsolatedSecretServiceStore()
        let key = CredentialKey(service: "svc", account: "acct")
        for ephemeral in [false, false, true] {
            try KeyItems.addDuplicate(key, prefix: fixture.prefix, value: Data("old".utf8), ephemeral: ephemeral, store: fixture.store)
        }
        #expect(try KeyItems.paths(key, prefix: fixture.prefix, store: fixture.store).count == 3)
        try fixture.store.save(Data("new".utf8), for: key)
        #expect(try KeyItems.paths(key, prefix: fixture.prefix, store: fixture.store).count == 1)
        #expect(try fixture.store.load(key) == Data("new".utf8))
        #expect(try fixture.store.metadata(for: key)?.isEphemeral == false)
    }

    @Test(.secretTool) func saveReplacesTheItemSecretToolWroteLeavingOne() async throws {
        try await offThePool {
            let service = "cvtest-replace-\(UUID().uuidString.prefix(8))"
            let store = TestEnvironment.unscopedStore()
            defer { _ = try? store.deleteAll(service: service) }
            let key = CredentialKey(service: service, account: "dave")
            try SecretTool.store(service: service, account: "dave", label: "old", value: Data("old".utf8))
            for round in 0..<2 {
                try store.save(Data("new \(round)".utf8), for: key)
                #expect(try KeyItems.paths(key, prefix: "", store: store).count == 1, "round \(round)")
                #expect(try SecretTool.lookup(service: service, account: "dave") == Data("new \(round)".utf8))
            }
            // And secret-tool's own store (replace by service and username) replaces ours.
            try SecretTool.store(service: service, account: "dave", label: "again", value: Data("from secret-tool".utf8))
            #expect(try KeyItems.paths(key, prefix: "", store: store).count == 1)
            #expect(try store.load(key) == Data("from secret-tool".utf8))
        }
    }

    @Test(.pythonKeyring) func saveReplacesTheItemPythonKeyringWroteLeavingOne() async throws {
        try await offThePool {
            let python = try #require(TestEnvironment.pythonWithKeyring)
            let service = "cvtest-replace-\(UUID().uuidString.prefix(8))"
            let store = TestEnvironment.unscopedStore()
            defer { _ = try? store.deleteAll(service: service) }
            let key = CredentialKey(service: service, account: "erin")
            let result = try CLIChild.run(
                python, ["-c", "import keyring, sys\nkeyring.set_password(sys.argv[1], 'erin', 'from python')", service],
                inheriting: ["PYTHON_KEYRING_BACKEND": "keyring.backends.SecretService.Keyring"])
            try #require(result.status == 0, "\(result.stderr)")
            try store.save(Data("from swift".utf8), for: key)
            #expect(try KeyItems.paths(key, prefix: "", store: store).count == 1)
            let read = try CLIChild.run(
                python, ["-c", "import keyring, sys\nsys.stdout.write(keyring.get_password(sys.argv[1], 'erin'))", service],
                inheriting: ["PYTHON_KEYRING_BACKEND": "keyring.backends.SecretService.Keyring"])
            #expect(read.stdoutText == "from swift")
        }
    }
}
