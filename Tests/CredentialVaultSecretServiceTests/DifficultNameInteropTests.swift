import CredentialVault
import CredentialVaultSecretService
import Foundation
import CredentialVaultTestSupport
import Testing

/// Names are data, shared with Python keyring both ways: a service and a user name made of
/// Python keyring's `DIFFICULT_CHARS` (`string.whitespace + string.punctuation`) and control
/// characters are read, listed (escaped) and deleted exactly by the library and the CLI, and
/// what they store under such names Python keyring reads.
@Suite(.ownThread, .privateKeyring)
struct DifficultNameInteropTests {
    static let difficult = " \t\n\r\u{0B}\u{0C}!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\u{1B}[2J\u{7F}\u{85}\u{9B}31m"

    /// Runs `code` with the keyring package's Secret Service backend; the names and the value
    /// are `sys.argv[1...]` (arguments carry every character but NUL unchanged).
    func python(_ code: String, _ arguments: [String]) throws -> CLIChild.Outcome {
        let python = try #require(TestEnvironment.pythonWithKeyring)
        return try CLIChild.run(
            python, ["-c", "import keyring, sys\n" + code] + arguments,
            inheriting: ["PYTHON_KEYRING_BACKEND": "keyring.backends.SecretService.Keyring"])
    }

    /// Runs `credvault` on the shared keyring with a generous wait per Secret Service call
    /// (the keyring answers slowly on a loaded machine; no test here is about that deadline).
    func credvault(_ arguments: [String], stdin: Data = Data()) throws -> CLIChild.Outcome {
        try CLIChild.run(
            SecretServiceCLITests.credvaultPath, arguments, stdin: stdin,
            inheriting: TestEnvironment.cliEnvironment.merging(["CREDVAULT_BACKEND": "secret-service"]) { $1 })
    }

    @Test(.pythonKeyring) func difficultNamesRoundTripWithPythonKeyringThroughTheLibraryAndTheCLI() throws {
        let service = "cvtest-difficult-\(UUID().uuidString.prefix(8))" + Self.difficult
        let account = Self.difficult + "alice"
        let store = TestEnvironment.unscopedStore()
        defer { _ = try? store.deleteAll(service: service) }
        let stored = try python("keyring.set_password(sys.argv[1], sys.argv[2], sys.argv[3])", [service, account, "from python"])
        #expect(stored.status == 0, "\(stored.stderr)")

        let key = CredentialKey(service: service, account: account)
        #expect(try store.load(key) == Data("from python".utf8))
        let listed = try store.listKeys(service: service)
        #expect(listed.map { Array($0.account.utf8) } == [Array(account.utf8)], "listed with its exact bytes")
        #expect(try credvault(["lookup", "--", service, account]).stdout == Data("from python".utf8))

        let line = try credvault(["list", "--service", service])
        #expect(line.status == 0)
        let text = line.stdoutText
        #expect(text.hasSuffix("\n") && text.filter { $0 == "\n" }.count == 1, "one line: \(text.debugDescription)")
        #expect(text.filter { $0 == "\t" }.count == 1, "two columns: \(text.debugDescription)")
        #expect(!text.unicodeScalars.contains { [0x0B, 0x0C, 0x0D, 0x1B, 0x7F, 0x85, 0x9B].contains($0.value) }, "control characters escaped")
        #expect(text.contains("\\x1B[2J") && text.contains("\\x09") && text.contains("\\\\"), "\(text.debugDescription)")
        let json = try credvault(["list", "--json", "--service", service])
        #expect(!json.stdout.contains(0x1B) && !json.stdoutText.unicodeScalars.contains { $0.value == 0x9B }, "JSON escapes them too")
        let items = try JSONSerialization.jsonObject(with: json.stdout) as? [[String: Any]]
        #expect((items?.first?["account"] as? String).map { Array($0.utf8) } == Array(account.utf8), "JSON has the exact name")

        // The CLI stores under another such name; Python keyring reads and deletes it.
        let other = "bob\t" + Self.difficult
        #expect(try credvault(["store", "--", service, other], stdin: Data("from credvault".utf8)).status == 0)
        let read = try python("sys.stdout.write(keyring.get_password(sys.argv[1], sys.argv[2]))", [service, other])
        #expect(read.stdoutText == "from credvault", "\(read.stderr)")
        #expect(try python("keyring.delete_password(sys.argv[1], sys.argv[2])", [service, other]).status == 0)
        #expect(try store.load(CredentialKey(service: service, account: other)) == nil)

        // And what Python stored, the CLI deletes.
        #expect(try credvault(["delete", "--", service, account]).status == 0)
        #expect(try python("print(keyring.get_password(sys.argv[1], sys.argv[2]))", [service, account]).stdoutText == "None\n")
    }
}
