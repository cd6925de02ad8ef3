import Foundation
import CredentialVaultTestSupport
import Testing

/// `--help` and `-h` ask for help only in option position before `--`: a name given after `--`,
/// or an option's value, is that name, on every command.
@Suite(.ownThread) final class CLIHelpPositionTests {
    let dir = TempDirectory()

    /// The names that look like options.
    static let optionLikeNames = ["-h", "--help", "--", "-", "--vault"]

    func credvault(_ arguments: [String], stdin: Data = Data()) throws -> CLIChild.Outcome {
        try CLIChild.run(arguments, environment: CLIChild.environment(dir), directory: dir.url, stdin: stdin)
    }

    func expectNoHelp(_ outcome: CLIChild.Outcome, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let text = String(decoding: outcome.stdout, as: UTF8.self)
        #expect(!text.contains("usage:"), "credvault \(arguments) printed help", sourceLocation: sourceLocation)
    }

    @Test(arguments: optionLikeNames)
    func aNameAfterDoubleDashIsANameForStoreLookupListDelete(name: String) throws {
        let value = Data("value of \(name)".utf8)
        for (service, account) in [(name, "acct"), ("svc", name), (name, name)] {
            let store = ["store", "--portable", "--", service, account]
            let stored = try credvault(store, stdin: value)
            #expect(stored.status == 0, "\(store): \(stored.stderr)")
            expectNoHelp(stored, store)
            let lookup = ["lookup", "--", service, account]
            let found = try credvault(lookup)
            #expect(found.status == 0 && found.stdout == value, "\(lookup): \(found.status) \(found.stderr)")
            let listed = try credvault(["list", "--service", service])
            #expect(String(decoding: listed.stdout, as: UTF8.self).contains("\(service)\t\(account)\n"), "list --service \(service)")
            let listedInline = try credvault(["list", "--service=\(service)"])
            #expect(listedInline.stdout == listed.stdout)
            let delete = ["delete", "--", service, account]
            let deleted = try credvault(delete)
            #expect(deleted.status == 0, "\(delete): \(deleted.stderr)")
            expectNoHelp(deleted, delete)
            #expect(try credvault(lookup).status == 1, "\(delete) deleted it")
        }
        #expect(try credvault(["store", "--", name, "once"], stdin: value).status == 0)
        let taken = try credvault(["lookup", "--take", "--", name, "once"])
        #expect(taken.status == 0 && taken.stdout == value)
        #expect(try credvault(["lookup", "--", name, "once"]).status == 1, "--take deleted it")
    }

    @Test(arguments: optionLikeNames)
    func anOptionValueIsAValueNotHelp(name: String) throws {
        // --vault NAME: a vault file called NAME in the working directory.
        let keyFile = try TestVault.keyFile(dir, name: "key-\(name.count)")
        let newKeyFile = try TestVault.keyFile(dir, name: "new-key-\(name.count)")
        let vault = ["--vault", name]
        let runs: [[String]] = [
            ["init"] + vault + ["--key-file", keyFile.path],
            ["store", "svc", "acct"] + vault + ["--key-file", keyFile.path],
            ["lookup", "svc", "acct"] + vault + ["--key-file", keyFile.path],
            ["list"] + vault + ["--key-file", keyFile.path],
            ["info"] + vault + ["--key-file", keyFile.path],
            ["passwd"] + vault + ["--key-file", keyFile.path, "--new-key-file", newKeyFile.path],
            ["rotate"] + vault + ["--key-file", newKeyFile.path],
            ["lookup", "svc", "acct", "--take"] + vault + ["--key-file", newKeyFile.path],
            ["delete", "svc", "acct"] + vault + ["--key-file", newKeyFile.path],
        ]
        let expected: [Int32] = [0, 0, 0, 0, 0, 0, 0, 0, 1]
        for (arguments, status) in zip(runs, expected) {
            let outcome = try credvault(arguments, stdin: Data("v".utf8))
            #expect(outcome.status == status, "\(arguments): \(outcome.stderr)")
            expectNoHelp(outcome, arguments)
        }
        #expect(FileManager.default.fileExists(atPath: dir.path(name).path), "the vault is the file \(name)")
        try FileManager.default.removeItem(at: dir.path(name))
    }

    @Test(arguments: optionLikeNames)
    func keygenTakesAnOptionLikePathAfterDoubleDash(name: String) throws {
        let outcome = try credvault(["keygen", "--", name])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        expectNoHelp(outcome, ["keygen", "--", name])
        let attributes = try FileManager.default.attributesOfItem(atPath: dir.path(name).path)
        #expect((attributes[.size] as? Int) == 32)
        try FileManager.default.removeItem(at: dir.path(name))
    }

    @Test func anOptionValueThatLooksLikeHelpIsNotHelp() throws {
        // Before the fix each of these printed help and exited 0 without doing anything.
        let missingValue = try credvault(["store", "--vault", "--help"])
        #expect(missingValue.status == 2 && missingValue.stderr.contains("expected SERVICE ACCOUNT"), "\(missingValue.stderr)")
        expectNoHelp(missingValue, ["store", "--vault", "--help"])
        let migrate = ["migrate", "--from", "memory", "--to", "file", "--service", "--help"]
        let migrated = try credvault(migrate)
        #expect(migrated.status == 0, "\(migrated.stderr)")
        expectNoHelp(migrated, migrate)
        let insforge = try credvault(["insforge", "--", "--help"])
        #expect(insforge.status == 2, "an action called --help is an unknown action: \(insforge.stderr)")
        expectNoHelp(insforge, ["insforge", "--", "--help"])
    }

    @Test func helpInOptionPositionStillPrintsHelp() throws {
        for arguments in [["store", "--help"], ["store", "svc", "acct", "-h"], ["lookup", "-h", "--", "x"], ["list", "--json", "--help"]] {
            let outcome = try credvault(arguments)
            #expect(outcome.status == 0, "\(arguments)")
            #expect(String(decoding: outcome.stdout, as: UTF8.self).contains("usage: credvault \(arguments[0])"), "\(arguments)")
        }
        let storedNothing = try credvault(["list"])
        #expect(storedNothing.stdout.isEmpty, "help did not store anything")
        let withValue = try credvault(["store", "--help=yes"])
        #expect(withValue.status == 2 && withValue.stderr.contains("--help takes no value"))
    }
}
