import CredentialVault
import CredentialVaultSecretService
import Foundation
import CredentialVaultTestSupport
import Testing

/// Names with control characters that another Secret Service client stored: listed with their
/// exact bytes and reachable through the listed key and through a key a caller builds with the
/// same name (names are data); names that differ only in normalisation stay apart.
@Suite(.ownThread, .privateKeyring)
struct StoredNameTests {
    @Test(.secretTool) func aNameWithAControlCharacterFromSecretToolIsListedAndReachable() throws {
        let service = "cvtest-names-\(UUID().uuidString.prefix(8))"
        let store = TestEnvironment.unscopedStore()
        defer { _ = try? store.deleteAll(service: service) }
        let account = "bob\tforged\u{1B}[2J"
        try SecretTool.store(service: service, account: account, label: "legacy", value: Data("v".utf8))
        try SecretTool.store(service: service, account: "caf\u{E9}", label: "nfc", value: Data("nfc".utf8))
        try SecretTool.store(service: service, account: "cafe\u{301}", label: "nfd", value: Data("nfd".utf8))

        let built = CredentialKey(service: service, account: account)
        #expect(try store.load(built) == Data("v".utf8))
        let listed = try store.listKeys(service: service)
        #expect(listed.count == 3, "\(listed)")
        let legacy = try #require(listed.first { Array($0.account.utf8) == Array(account.utf8) })
        #expect(try store.load(legacy) == Data("v".utf8))
        #expect(try store.metadata(for: legacy) != nil)
        #expect(try store.delete(legacy))
        #expect(try SecretTool.lookup(service: service, account: account) == nil)
        #expect(try store.load(CredentialKey(service: service, account: "caf\u{E9}")) == Data("nfc".utf8))
        #expect(try store.load(CredentialKey(service: service, account: "cafe\u{301}")) == Data("nfd".utf8))
    }
}
