import CredentialVaultTestSupport
import Foundation
import Testing

/// git's own credential-helper test (git.git's t0303-credential-external.sh with
/// lib-credential.sh, vendored unchanged) against `git-credential-credvault` on the sealed file,
/// with the installed git: nothing fails, the empty user name of single sign-on hosts included
/// (checks that need git >= 2.41 are skipped with an older git, and said so).
@Suite(.ownThread) struct GitCredentialSuiteTests {
    @Test(.enabled(if: GitCredentialSuite.hasGit, "needs git: run scripts/install-deps.sh credential-helpers"))
    func gitsOwnHelperTestPassesOnTheSealedFile() throws {
        let outcome = try GitCredentialSuite.run(mode: "file", credvault: BuiltProducts.credvault)
        #expect(outcome.status == 0 && outcome.failed == 0, "\(outcome.output)")
        #expect(outcome.passed + outcome.skipped == 21 && outcome.passed >= 15, "git \(outcome.gitVersion): \(outcome.output)")
        #expect(outcome.passed("helper (credvault) can store empty username"), "\(outcome.output)")
    }
}
