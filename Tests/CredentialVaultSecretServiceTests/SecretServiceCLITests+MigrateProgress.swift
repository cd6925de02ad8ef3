import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

/// `credvault migrate` shows how many credentials are done of how many on a terminal, and
/// nothing of the kind through a pipe.
extension SecretServiceCLITests {
    @Test func migrateShowsItsProgressOnATerminalOnly() throws {
        let service = "cvtest-progress-\(UUID().uuidString.prefix(8))"
        defer { _ = try? TestEnvironment.unscopedStore().deleteAll(service: service) }
        for account in ["a", "b", "c"] {
            #expect(try credvault(["store", service, account], stdin: Data(account.utf8)).status == 0)
        }
        let piped = try credvault(["migrate", "--from", "file", "--to", "secret-service"])
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(!piped.stderr.contains("credentials done") && !piped.stderr.contains("\r"), "\(piped.stderr)")

        // Back, on a terminal (script(1) gives the command one, stdout and stderr both).
        let command = [Self.credvaultPath, "migrate", "--from", "secret-service", "--to", "file", "--service", service].joined(separator: " ")
        let onTerminal = try CLIChild.run("/usr/bin/script", ["-qefc", command, "/dev/null"], inheriting: environment)
        let screen = onTerminal.stdoutText
        #expect(onTerminal.status == 0, "\(screen)")
        #expect(screen.contains("0/3 credentials done (0%)") && screen.contains("3/3 credentials done (100%)"), "\(screen)")
        #expect(screen.contains("\r\u{1B}[Kmigrated\t\(service)\tc"), "each line printed where the progress line was: \(screen)")
        let afterProgress = screen.components(separatedBy: "3/3 credentials done (100%)").last ?? ""
        #expect(afterProgress.hasPrefix("\r\u{1B}[K") && afterProgress.contains("secret-service -> file: migrated 3"), "cleared before the summary: \(screen)")
        #expect(try openVault().listKeys(service: service).count == 3)
    }
}
