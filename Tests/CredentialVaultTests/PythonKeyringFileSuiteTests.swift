import CredentialVaultTestSupport
import Foundation
import Testing

/// Python keyring's own backend suite (`BackendBasicTests`, unchanged) against `credvault` on the
/// sealed file, through a keyring backend that runs the CLI: names made of white space,
/// punctuation and control characters, an empty user name, Unicode, deletes within a group,
/// all round-trip exactly.
@Suite(.ownThread) final class PythonKeyringFileSuiteTests {
    let dir = TempDirectory()

    @Test(.enabled(if: PythonKeyringSuite.python != nil, "needs CREDVAULT_TEST_PYTHON_KEYRING (keyring and pytest): run scripts/test.sh"))
    func pythonKeyringsOwnBackendSuitePassesOnTheSealedFile() throws {
        let python = try #require(PythonKeyringSuite.python)
        let outcome = try PythonKeyringSuite.run(
            python: python, credvault: BuiltProducts.credvault, options: ["--backend", "file"], environment: CLIChild.environment(dir))
        #expect(outcome.status == 0 && outcome.failed.isEmpty, "\(outcome.failed)\n\(outcome.output)")
        for name in PythonKeyringSuite.nameTests {
            #expect(outcome.passed.contains(name), "\(name) passed")
        }
        #expect(outcome.passed.count >= 15, "the whole suite ran (15 tests in keyring 25.7): \(outcome.passed.count) passed")
    }
}
