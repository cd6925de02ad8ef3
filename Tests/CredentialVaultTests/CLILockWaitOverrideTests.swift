import Foundation
import CredentialVaultTestSupport
import Testing

/// `$CREDVAULT_TEST_LOCK_WAIT_SECONDS`, the tests' override of how long `credvault` waits for
/// another process's lock on a vault (tests that inspect a waiting CLI set a long one): a value
/// that is not 1 to 3600 seconds is a usage error, never silently the default; a valid one is
/// accepted.
@Suite(.ownThread) final class CLILockWaitOverrideTests {
    let dir = TempDirectory()

    func store(lockWait: String) throws -> CLIChild.Outcome {
        try CLIChild.run(
            ["store", "svc", "acct"], environment: CLIChild.environment(dir, ["CREDVAULT_TEST_LOCK_WAIT_SECONDS": lockWait]),
            stdin: Data("v".utf8))
    }

    @Test(arguments: ["abc", "0", "3601", "", "-5"])
    func aWaitThatIsNotOneToAnHourOfSecondsIsAUsageError(lockWait: String) throws {
        let outcome = try store(lockWait: lockWait)
        #expect(outcome.status == 2, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("CREDVAULT_TEST_LOCK_WAIT_SECONDS"), "\(outcome.stderr)")
    }

    @Test func aValidWaitIsAccepted() throws {
        let outcome = try store(lockWait: "600")
        #expect(outcome.status == 0, "\(outcome.stderr)")
    }
}
