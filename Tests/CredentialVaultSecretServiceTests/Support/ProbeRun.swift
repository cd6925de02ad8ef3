import Foundation

/// The outcome of one `secret-service-probe` step.
struct ProbeStep: CustomStringConvertible {
    var step: String
    var outcome: String
    var milliseconds: Int
    var detail: String?
    var description: String { "\(step) -> \(outcome) in \(milliseconds) ms" + (detail.map { " (\($0))" } ?? "") }
}

/// Runs `secret-service-probe` with `steps`, inside a throw-away bus (`busMode`: `--unlocked`,
/// `--locked`, `--no-provider`) or, with `busMode == nil`, with the given environment only.
func runProbe(
    busMode: String?, timeoutMilliseconds: Int? = nil, _ steps: [String], environment: [String: String?] = [:]
) throws -> [ProbeStep] {
    var probeArguments: [String] = []
    if let timeoutMilliseconds { probeArguments += ["--timeout-ms", String(timeoutMilliseconds)] }
    probeArguments += steps
    let result: ChildProcess.Result
    if let busMode {
        result = try ChildProcess.run(
            TestEnvironment.withKeyringScript.path, [busMode, "--", TestEnvironment.probe.path] + probeArguments,
            environment: environment)
    } else {
        result = try ChildProcess.run(TestEnvironment.probe.path, probeArguments, environment: environment)
    }
    let steps = result.stdoutText.split(separator: "\n").compactMap { line -> ProbeStep? in
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 3, let milliseconds = Int(fields[2]) else { return nil }
        return ProbeStep(step: fields[0], outcome: fields[1], milliseconds: milliseconds, detail: fields.count > 3 ? fields[3] : nil)
    }
    if steps.count != probeArguments.count - (timeoutMilliseconds == nil ? 0 : 2) {
        throw ProbeFailure(status: result.status, stdout: result.stdoutText, stderr: result.stderr)
    }
    return steps
}

/// The probe did not print one line per step.
struct ProbeFailure: Error, CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String
    var description: String { "secret-service-probe failed (status \(status)):\n\(stdout)\n\(stderr)" }
}
