import CredentialVault
import CredentialVaultSecretService
import Foundation
import CredentialVaultTestSupport
import Testing

/// Items are shared with `secret-tool` and Python `keyring`, both ways (default collection,
/// attributes `service` and `username`).
@Suite(.ownThread, .privateKeyring)
struct InteropTests {
    /// A service name of its own per test (no prefix: the other tools see the real names).
    static func uniqueService() -> String { "cvtest-interop-\(UUID().uuidString.prefix(8))" }

    static let binary = Data([0x61, 0x00, 0x62, 0xFF, 0x00, 0x0A])

    @Test(.secretTool) func secretToolWritesWeReadListAndDelete() throws {
        let service = Self.uniqueService()
        let store = TestEnvironment.unscopedStore()
        defer { _ = try? store.deleteAll(service: service) }
        try SecretTool.store(service: service, account: "bob", label: "Bob's token", value: Self.binary)
        let key = CredentialKey(service: service, account: "bob")
        #expect(try store.load(key) == Self.binary)
        #expect(try store.listKeys(service: service).map(\.label) == ["Bob's token"])
        #expect(try store.metadata(for: key)?.accessibility == .deviceOnly)
        #expect(try store.delete(key))
        #expect(try SecretTool.lookup(service: service, account: "bob") == nil)
    }

    @Test(.secretTool) func weWriteSecretToolReads() throws {
        let service = Self.uniqueService()
        let store = TestEnvironment.unscopedStore()
        defer { _ = try? store.deleteAll(service: service) }
        try store.save(Self.binary, for: CredentialKey(service: service, account: "carol"))
        #expect(try SecretTool.lookup(service: service, account: "carol") == Self.binary)
        #expect(try SecretTool.labels(service: service) == ["carol on \(service)"])
    }

    @Test(.secretTool) func ourSaveReplacesTheItemSecretToolWrote() throws {
        let service = Self.uniqueService()
        let store = TestEnvironment.unscopedStore()
        defer { _ = try? store.deleteAll(service: service) }
        try SecretTool.store(service: service, account: "dave", label: "old", value: Data("old".utf8))
        try store.save(Data("new".utf8), for: CredentialKey(service: service, account: "dave"))
        #expect(try SecretTool.search(service: service) == 1)
        #expect(try SecretTool.lookup(service: service, account: "dave") == Data("new".utf8))
    }

    @Test(.pythonKeyring) func pythonKeyringBothWays() throws {
        let python = try #require(TestEnvironment.pythonWithKeyring)
        let service = Self.uniqueService()
        let store = TestEnvironment.unscopedStore()
        defer { _ = try? store.deleteAll(service: service) }
        func py(_ code: String) throws -> String {
            let result = try CLIChild.run(
                python, ["-c", "import keyring, sys\n" + code],
                inheriting: ["PYTHON_KEYRING_BACKEND": "keyring.backends.SecretService.Keyring"])
            guard result.status == 0 else { throw SecretTool.Failed(output: result.stderr) }
            return result.stdoutText
        }
        // Python writes, we read and delete.
        _ = try py("keyring.set_password(\(pyString(service)), 'erin', 'from python ✓')")
        let erin = CredentialKey(service: service, account: "erin")
        #expect(try store.load(erin) == Data("from python ✓".utf8))
        #expect(try store.listKeys(service: service) == [erin])
        #expect(try store.delete(erin))
        #expect(try py("print(keyring.get_password(\(pyString(service)), 'erin'))") == "None\n")

        // We write, Python reads and deletes.
        let frank = CredentialKey(service: service, account: "frank")
        try store.save(Data("from swift ✓".utf8), for: frank)
        #expect(try py("sys.stdout.write(keyring.get_password(\(pyString(service)), 'frank'))") == "from swift ✓")
        _ = try py("keyring.delete_password(\(pyString(service)), 'frank')")
        #expect(try store.load(frank) == nil)
    }

    private func pyString(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
