import CredentialVaultTestSupport
import Foundation
import Testing

/// git's own credential-helper test (t0303, vendored unchanged) against `git-credential-credvault`
/// on the Secret Service, on a throw-away bus and keyring of its own (the helper's fixed host
/// names must not meet other tests' items), with the installed git: nothing fails.
@Suite(.ownThread) struct GitCredentialSecretServiceSuiteTests {
    @Test(.throwAwayBuses, .enabled(if: GitCredentialSuite.hasGit, "needs git: run scripts/install-deps.sh credential-helpers"))
    func gitsOwnHelperTestPassesOnTheSecretService() throws {
        // Without CREDVAULT_TEST_KEYRING the script makes its own private bus and keyring.
        let outcome = try GitCredentialSuite.run(
            mode: "secret-service", credvault: URL(fileURLWithPath: SecretServiceCLITests.credvaultPath),
            changes: ["CREDVAULT_TEST_KEYRING": nil, "DBUS_SESSION_BUS_ADDRESS": nil])
        #expect(outcome.status == 0 && outcome.failed == 0, "\(outcome.output)")
        #expect(outcome.passed + outcome.skipped == 21 && outcome.passed >= 15, "git \(outcome.gitVersion): \(outcome.output)")
        #expect(outcome.passed("helper (credvault) can store empty username"), "\(outcome.output)")
    }
}
