import CredentialVaultTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The outcome of one `secret-service-probe` step. `milliseconds` is for the messages of a
/// failing test only: no test asserts it.
struct ProbeStep: CustomStringConvertible {
    var step: String
    var outcome: String
    var milliseconds: Int
    var detail: String?
    var description: String { "\(step) -> \(outcome) in \(milliseconds) ms" + (detail.map { " (\($0))" } ?? "") }

    /// Parses one line of the probe's output; `nil` for progress lines (`#`) and anything else.
    init?(line: Substring) {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 3, let milliseconds = Int(fields[2]) else { return nil }
        self.init(step: fields[0], outcome: fields[1], milliseconds: milliseconds, detail: fields.count > 3 ? fields[3] : nil)
    }

    init(step: String, outcome: String, milliseconds: Int, detail: String?) {
        self.step = step
        self.outcome = outcome
        self.milliseconds = milliseconds
        self.detail = detail
    }

    /// The steps in the probe's `output`; throws unless there is one per step asked.
    static func parse(_ output: String, expected: Int, status: Int32, stderr: String) throws -> [ProbeStep] {
        let steps = output.split(separator: "\n").compactMap { ProbeStep(line: $0) }
        guard steps.count == expected else { throw ProbeFailure(status: status, stdout: output, stderr: stderr) }
        return steps
    }
}

/// The probe's arguments for `steps` with an optional per-operation timeout.
private func probeArguments(_ timeoutMilliseconds: Int?, _ steps: [String]) -> [String] {
    (timeoutMilliseconds.map { ["--timeout-ms", String($0)] } ?? []) + steps
}

/// Runs `secret-service-probe` with `steps`, inside a throw-away bus (`busMode`: `--unlocked`,
/// `--locked`, `--no-provider`) or, with `busMode == nil`, with the given environment only.
func runProbe(
    busMode: String?, timeoutMilliseconds: Int? = nil, _ steps: [String], environment: [String: String?] = [:]
) throws -> [ProbeStep] {
    let arguments = probeArguments(timeoutMilliseconds, steps)
    let result: CLIChild.Outcome
    if let busMode {
        result = try CLIChild.run(
            TestEnvironment.withKeyringScript.path, [busMode, "--", TestEnvironment.probe.path] + arguments, inheriting: environment)
    } else {
        result = try CLIChild.run(TestEnvironment.probe.path, arguments, inheriting: environment)
    }
    return try ProbeStep.parse(result.stdoutText, expected: steps.count, status: result.status, stderr: result.stderr)
}

/// A `secret-service-probe` on this process's bus whose output is read as it comes, for steps
/// whose progress lines a test acts on (for example: release a lock once the saves wait).
final class RunningProbe {
    private let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private let reader: LineReader
    private var lines: [String] = []
    private let expected: Int
    /// Kills the probe past its ceiling, so that a read never hangs the test.
    private let ceiling: DispatchWorkItem

    init(timeoutMilliseconds: Int? = nil, _ steps: [String], ceiling limit: Duration = .seconds(120)) throws {
        expected = steps.count
        reader = LineReader(output)
        process.executableURL = TestEnvironment.probe
        process.arguments = probeArguments(timeoutMilliseconds, steps)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let pid = process.processIdentifier
        ceiling = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + limit.seconds, execute: ceiling)
    }

    deinit {
        ceiling.cancel()
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Reads until the progress line `# <prefix>...`; returns it without the `# `, or throws
    /// when the probe ends first.
    func waitForProgress(_ prefix: String) throws -> String {
        while let line = reader.next() {
            lines.append(line)
            if line.hasPrefix("# " + prefix) { return String(line.dropFirst(2)) }
        }
        throw ProbeFailure(status: -1, stdout: lines.joined(separator: "\n"), stderr: "the probe ended before '# \(prefix)'")
    }

    /// Reads the rest, waits for the probe to exit and returns every step's outcome.
    func finish() throws -> [ProbeStep] {
        while let line = reader.next() { lines.append(line) }
        process.waitUntilExit()
        ceiling.cancel()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return try ProbeStep.parse(lines.joined(separator: "\n"), expected: expected, status: process.terminationStatus, stderr: stderr)
    }
}

/// The probe did not print one line per step.
struct ProbeFailure: Error, CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String
    var description: String { "secret-service-probe failed (status \(status)):\n\(stdout)\n\(stderr)" }
}
