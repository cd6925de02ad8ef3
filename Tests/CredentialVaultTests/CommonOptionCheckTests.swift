import Foundation
import CredentialVaultTestSupport
import Testing

/// The common options are checked when a command uses them, not when the command line is read:
/// an option a command has no use for never fails it, and a command line with two mistakes is
/// reported for the one the command meets first.
@Suite(.ownThread) final class CommonOptionCheckTests {
    let dir = TempDirectory()

    func credvault(_ arguments: [String], environment extra: [String: String] = [:], stdin: Data = Data()) throws -> CLIChild.Outcome {
        try CLIChild.run(arguments, environment: CLIChild.environment(dir, extra), stdin: stdin)
    }

    @Test func anOptionTheCommandDoesNotUseNeverFailsIt() throws {
        // keygen opens no vault: a key cache it would never use is none of its business.
        let keygen = try credvault(["keygen", dir.path("key").path], environment: ["CREDVAULT_KEY_CACHE": "forever"])
        #expect(keygen.status == 0, "\(keygen.stderr)")
        // --kdf is for a vault being created: an existing one is opened as it is.
        let stored = try credvault(["store", "--portable", "svc", "acct"], stdin: Data("value".utf8))
        #expect(stored.status == 0, "\(stored.stderr)")
        let found = try credvault(["lookup", "svc", "acct", "--kdf", "strongest"])
        #expect(found.status == 0 && found.stdout == Data("value".utf8), "\(found.stderr)")
    }

    @Test func aCommandThatUsesABadOptionSaysSo() throws {
        let created = try credvault(["init", "--kdf", "strongest"])
        #expect(created.status == 2 && created.stderr.contains("--kdf is interactive, moderate or sensitive"), "\(created.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("data/credential-vault/default.cvault").path), "no vault was made")
    }

    @Test func theFirstMistakeTheCommandMeetsIsReported() throws {
        // Its arguments are checked before the vault's key options.
        let stored = try credvault(["store", "svc", "--device", "--key-file", dir.path("key").path], stdin: Data("value".utf8))
        #expect(stored.status == 2 && stored.stderr.contains("expected SERVICE ACCOUNT"), "\(stored.stderr)")
        let lookedUp = try credvault(["lookup", "svc", "acct", "--device", "--key-file", dir.path("key").path])
        #expect(lookedUp.status == 2 && lookedUp.stderr.contains("give one of --passphrase-file, --key-file, --ask-passphrase, --device"), "\(lookedUp.stderr)")
    }
}
