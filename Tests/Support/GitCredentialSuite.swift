import Foundation

/// git's own credential-helper test, t0303 (vendored in `Tests/GitCredentialHelperSuite`), run by
/// `scripts/git-credential-t0303.sh` against `git-credential-credvault` with the installed git.
public enum GitCredentialSuite {
    /// What the run reported (its last line, "N passed, M failed, K skipped (git V, MODE)").
    public struct Outcome: Sendable {
        /// The script's exit status (0: nothing failed and git's harness finished).
        public let status: Int32
        /// Checks that passed, failed, and were skipped (they need a newer git).
        public let passed: Int, failed: Int, skipped: Int
        /// The git version the harness ran.
        public let gitVersion: String
        /// Everything the script wrote, for a failure message.
        public let output: String

        /// Whether git's harness reported the check named `title` as passed (`ok N - title`).
        public func passed(_ title: String) -> Bool {
            output.split(separator: "\n").contains { $0.hasPrefix("ok ") && $0.hasSuffix(" - \(title)") }
        }
    }

    /// Whether git is installed.
    public static var hasGit: Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .contains { FileManager.default.isExecutableFile(atPath: "\($0)/git") }
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/git-credential-t0303.sh")

    /// Runs t0303 in `mode` (`file` or `secret-service`) against `credvault`, in the
    /// environment of this process with `changes` (`nil` removes a variable). Blocks until the
    /// script ends; git's harness runs each helper call to its end.
    public static func run(mode: String, credvault: URL, changes: [String: String?] = [:]) throws -> Outcome {
        var environment = ProcessInfo.processInfo.environment
        environment["CV"] = credvault.path
        for (name, value) in changes { environment[name] = value }
        let run = try SuiteRun("/bin/bash", [script.path, mode], environment: environment)
        let text = run.output
        // The script's summary, "15 passed, 0 failed, 6 skipped (git 2.39.5, file)" (a bus that
        // ends after it may still write a line to stderr).
        let summary = text.split(separator: "\n").last { $0.contains(" passed, ") && $0.contains(" skipped (git ") }?.prefix { $0 != ")" } ?? ""
        let numbers = summary.split(whereSeparator: { !$0.isNumber && $0 != "." }).map(String.init)
        let counts = numbers.prefix(3).compactMap { Int($0) }
        return Outcome(
            status: run.status, passed: counts.first ?? 0, failed: counts.count > 1 ? counts[1] : -1,
            skipped: counts.count > 2 ? counts[2] : 0, gitVersion: numbers.count > 3 ? numbers[3] : "?", output: text)
    }
}
