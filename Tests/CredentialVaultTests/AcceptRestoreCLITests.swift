import CredentialVaultTestSupport
import CredentialVaultTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `credvault accept-restore` on the copies a vault with a rollback counter refuses (exit 13),
/// through the real executable.
@Suite(.ownThread) final class AcceptRestoreCLITests {
    let dir = TempDirectory()
    lazy var environment = CLIChild.environment(dir)
    lazy var vault = dir.path("vaults/v.cvault").path
    lazy var passphrase: String = {
        let url = dir.path("passphrase")
        try? Data("accept restore passphrase\n".utf8).write(to: url)
        _ = chmod(url.path, 0o600)
        return url.path
    }()

    func credvault(_ arguments: [String], stdin: Data = Data()) throws -> CLIChild.Outcome {
        try CLIChild.run(arguments + ["--vault", vault, "--passphrase-file", passphrase], environment: environment, stdin: stdin)
    }

    /// A copy from before the vault got its counter: refused with advice to run accept-restore,
    /// which must then accept it (it said "nothing to accept" and left the vault refused).
    @Test func aCopyFromBeforeTheCounterIsAcceptedOnPurpose() throws {
        #expect(try credvault(["init", "--kdf", "interactive"]).status == 0)
        #expect(try credvault(["store", "s", "a"], stdin: Data("before".utf8)).status == 0)
        let preCounter = try Data(contentsOf: URL(fileURLWithPath: vault))
        let moved = try credvault(["custody", "file", "--rollback-counter"])
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(try credvault(["store", "s", "a"], stdin: Data("after".utf8)).status == 0)
        try CustodySuite.writeInPlaceForTests(preCounter, to: URL(fileURLWithPath: vault))

        let refused = try credvault(["lookup", "s", "a"])
        #expect(refused.status == 13 && refused.stderr.contains("accept-restore"), "\(refused.status) \(refused.stderr)")
        let accepted = try credvault(["accept-restore"])
        #expect(accepted.status == 0 && accepted.stderr.contains("accepted"), "\(accepted.status) \(accepted.stderr)")
        let restored = try credvault(["lookup", "s", "a"])
        #expect(restored.status == 0 && restored.stdout == Data("before".utf8), "\(restored.status) \(restored.stderr)")
        // Accepted as it was then, without a counter: it says so, and promises no refusal of
        // older copies, which would open (until custody --rollback-counter adds one again).
        #expect(accepted.stderr.contains("it has no rollback counter") && !accepted.stderr.contains("older copies are refused"), "\(accepted.stderr)")
        try CustodySuite.writeInPlaceForTests(preCounter, to: URL(fileURLWithPath: vault))
        #expect(try credvault(["lookup", "s", "a"]).status == 0, "that copy put back once more opens: no counter refuses it")
    }

    @Test func aVaultThatNeverHadACounterHasNothingToAccept() throws {
        #expect(try credvault(["init", "--kdf", "interactive"]).status == 0)
        let outcome = try credvault(["accept-restore"])
        #expect(outcome.status == 0 && outcome.stderr.contains("nothing to accept"), "\(outcome.stderr)")
    }
}
