import Foundation

/// Python keyring's own backend suite (`keyring.testing.backend.BackendBasicTests`, from the
/// installed `keyring` package, unchanged) run by pytest against `credvault`, through the
/// keyring backend in `Tests/PythonKeyring/credvault_keyring.py` that runs `credvault store`,
/// `lookup` and `delete`. The Python is the venv of `scripts/services/python-keyring.sh`
/// (`CREDVAULT_TEST_PYTHON_KEYRING`, with keyring and pytest), which `scripts/test.sh` makes.
public enum PythonKeyringSuite {
    /// The suite's tests that use names with white space, punctuation and control characters
    /// (`DIFFICULT_CHARS = string.whitespace + string.punctuation`), and the empty user name.
    public static let nameTests = [
        "test_difficult_chars", "test_delete_present", "test_delete_not_present", "test_delete_one_in_group",
        "test_unicode_and_ascii_chars", "test_empty_username",
    ]

    /// What pytest reported: its exit status, the tests that passed and those that did not
    /// (failed or errors), and its output for a failure message.
    public struct Outcome: Sendable {
        /// pytest's exit status (0: every test passed).
        public let status: Int32
        /// The names of the tests that passed (`test_difficult_chars`, ...).
        public let passed: [String]
        /// The names of the tests that failed or had errors.
        public let failed: [String]
        /// pytest's output.
        public let output: String
    }

    /// The Python with keyring and pytest, when the venv is there.
    public static var python: String? {
        guard let path = ProcessInfo.processInfo.environment["CREDVAULT_TEST_PYTHON_KEYRING"],
            FileManager.default.isExecutableFile(atPath: path)
        else { return nil }
        return path
    }

    /// `Tests/PythonKeyring`, with the bridge and the test module.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("PythonKeyring")

    /// Runs the suite with `python` against `credvault` given `options` (its common options:
    /// backend, vault, key file), in `environment` (HOME and the XDG directories of the runs),
    /// through `launcher` when given (a command that runs the rest of its arguments, such as
    /// `scripts/with-keyring.sh --`, for a bus of the run's own). Blocks until pytest ends;
    /// every credvault call in it has a deadline of its own (the bridge's), so a hung backend
    /// ends the run with failures.
    public static func run(
        python: String, credvault: URL, options: [String], environment: [String: String], launcher: [String] = []
    ) throws -> Outcome {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("cv-pytest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        // -p no:cacheprovider and no bytecode: nothing is written into the source tree.
        let command = launcher + [python]
        let run = try SuiteRun(
            command[0],
            command.dropFirst() + ["-m", "pytest", "-v", "-p", "no:cacheprovider", "--rootdir", work.path, directory.appendingPathComponent("test_backend_suite.py").path],
            environment: environment.merging([
                "CREDVAULT_KEYRING_COMMAND": credvault.path,
                "CREDVAULT_KEYRING_OPTIONS": options.map(shellQuoted).joined(separator: " "),
                "PYTHONPATH": directory.path, "PYTHONDONTWRITEBYTECODE": "1",
            ]) { $1 },
            directory: work)
        return Outcome(
            status: run.status, passed: tests(run.output, "PASSED"),
            failed: tests(run.output, "FAILED") + tests(run.output, "ERROR"), output: run.output)
    }

    /// The tests whose `-v` line ends in `result`: `test_backend_suite.py::Class::name PASSED [..%]`.
    private static func tests(_ output: String, _ result: String) -> [String] {
        output.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count >= 2, words[1] == result, let name = words[0].split(separator: ":").last else { return nil }
            return String(name)
        }
    }

    private static func shellQuoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
