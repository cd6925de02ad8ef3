import CredentialVault
import Foundation
import CredentialVaultTestSupport
import Testing

@Suite(.ownThread) struct ApplicationIdentifierTests {
    @Test func reverseDNSNamesAreAccepted() throws {
        for name in ["org.example.Desktop", "com.example", "io.my-app_2.Tool", String(repeating: "a", count: 63) + ".b"] {
            let identifier = try ApplicationIdentifier(name)
            #expect(identifier.name == name)
            #expect(identifier.defaultService == name)
            #expect(identifier.secretServiceScope == name)
            #expect(!identifier.isUnscoped)
            #expect(identifier.defaultVaultURL.path.hasSuffix("/\(name)/credentials.cvault"))
        }
    }

    @Test func otherNamesAreRefusedWithInvalidArgumentNeverATrap() {
        let tooLong = Array(repeating: "abcdefgh", count: 32).joined(separator: ".")  // 287 bytes
        for name in [
            "", "desktop", "credential-vault", ".org.example", "org.example.", "org..example", "org/example.app",
            "org.example app", "org.exämple", "org.example.\u{1B}", "../../etc.x", String(repeating: "a", count: 64) + ".b", tooLong,
        ] {
            #expect(throws: CredentialVaultError.self, "\(name)") { try ApplicationIdentifier(name) }
            do {
                _ = try ApplicationIdentifier(name)
            } catch {
                guard case .invalidArgument = error else {
                    Issue.record("\(name): \(error)")
                    continue
                }
            }
        }
    }

    @Test func theCommandLineNamespaceKeepsItsPathsAndService() {
        let cli = ApplicationIdentifier.credvault
        #expect(cli.name == "credential-vault")
        #expect(cli.isUnscoped)
        #expect(cli.secretServiceScope == nil)
        #expect(cli.defaultService == "credential-vault")
        #expect(cli.defaultVaultURL == SealedFileStore.defaultURL)
        #expect(cli.defaultVaultURL.path.hasSuffix("/credential-vault/default.cvault"))
        #expect(SealedFileConfiguration().defaultService == "credential-vault")
    }

    @Test func configurationsDeriveTheirDefaultServiceUnlessGiven() throws {
        let app = try ApplicationIdentifier("org.example.Desktop")
        #expect(SealedFileConfiguration(application: app).defaultService == "org.example.Desktop")
        #expect(SealedFileConfiguration(application: app, defaultService: "svc").defaultService == "svc")
        #expect(InMemoryStore(application: app).defaultService == "org.example.Desktop")
        #expect(InMemoryStore(defaultService: "svc").defaultService == "svc")
        var configuration = SealedFileConfiguration()
        configuration.defaultService = "explicit"
        configuration.application = app
        #expect(configuration.defaultService == "explicit")
    }
}
