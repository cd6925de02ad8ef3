import CredentialVaultTestSupport
import Foundation
import Testing

/// Python keyring's own backend suite (`BackendBasicTests`, unchanged) against `credvault
/// --backend secret-service`, through a keyring backend that runs the CLI: names made of white
/// space, punctuation and control characters, an empty user name, Unicode, deletes within a
/// group, all round-trip exactly through the Secret Service. On a throw-away bus and keyring of
/// its own: the suite's fixed names (`service1`, ...) must not meet other tests' items.
@Suite(.ownThread) struct PythonKeyringSecretServiceSuiteTests {
    @Test(.pythonKeyring, .throwAwayBuses) func pythonKeyringsOwnBackendSuitePassesOnTheSecretService() throws {
        let python = try #require(PythonKeyringSuite.python)
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("cv-pysuite-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["XDG_STATE_HOME"] = home.appendingPathComponent("state").path
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        let outcome = try PythonKeyringSuite.run(
            python: python, credvault: URL(fileURLWithPath: SecretServiceCLITests.credvaultPath), options: ["--backend", "secret-service"],
            environment: environment, launcher: [TestEnvironment.withKeyringScript.path, "--unlocked", "--"])
        #expect(outcome.status == 0 && outcome.failed.isEmpty, "\(outcome.failed)\n\(outcome.output)")
        for name in PythonKeyringSuite.nameTests {
            #expect(outcome.passed.contains(name), "\(name) passed")
        }
        #expect(outcome.passed.count >= 15, "the whole suite ran (15 tests in keyring 25.7): \(outcome.passed.count) passed")
    }
}
