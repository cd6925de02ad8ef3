import CredentialVault
import CredentialVaultSecretService
import CredentialVaultTestSupport
import Foundation
import Testing

/// KeePassXC matches the attributes of a search, and of a replacing create, so that a name also
/// finds the same name followed by a line feed (`""` finds `"\n"`): a save of `""` would
/// overwrite the credential `"\n"`. The backend refuses names ending in a line feed there, with
/// `unsupported` naming KeePassXC and the name escaped, before anything is written.
@Suite(.ownThread) struct KeePassXCNameRefusalTests {
    @Test(.sharedProvider(.keepassxc))
    func keepassxcRefusesANameEndingInALineFeedAndKeepsTheNameWithoutIt() throws {
        let store = SecretServiceStore(configuration: Provider.keepassxc.configuration(prefix: "cvrefuse-\(UUID().uuidString.prefix(8))/"))
        defer { _ = try? store.deleteAll() }
        let service = "refusal.accounts"
        let newline = CredentialKey(service: service, account: "\n")
        let empty = CredentialKey(service: service, account: "")
        let refused = thrown { () throws(CredentialVaultError) in try store.save(Data("newline".utf8), for: newline) }
        guard case .unsupported(let why)? = refused else {
            Issue.record("saving the account \"\\n\" on KeePassXC gave \(String(describing: refused)), not unsupported")
            return
        }
        #expect(why.contains("KeePassXC cannot store the account name \"\\u{A}\" exactly"), "\(why)")
        #expect(!CredentialKey.hasControlCharacter(why), "the name is escaped: \(why)")
        #expect(try store.load(newline) == nil, "nothing was stored")

        // The name KeePassXC would have confused with it is stored, and stays its own.
        try store.save(Data("empty".utf8), for: empty)
        #expect(try store.load(empty) == Data("empty".utf8))
        #expect(try store.load(newline) == nil)
        #expect(try store.listKeys(service: service).map { Array($0.account.utf8) } == [[]], "one credential, named \"\"")
        #expect(thrown { () throws(CredentialVaultError) in try store.save(Data("newline".utf8), for: newline) } != nil)
        #expect(try store.load(empty) == Data("empty".utf8), "a refused save replaced nothing")

        let lineFeedService = CredentialKey(service: "refusal.service\r\n", account: "a")
        let refusedService = thrown { () throws(CredentialVaultError) in try store.save(Data("v".utf8), for: lineFeedService) }
        guard case .unsupported(let message)? = refusedService else {
            Issue.record("a service ending in a line feed gave \(String(describing: refusedService)), not unsupported")
            return
        }
        #expect(message.contains("service name \"refusal.service\\u{D}\\u{A}\""), "\(message)")
        #expect(try store.listKeys(service: "refusal.service\r").isEmpty, "nothing stored under the name without the line feed")
    }
}
