import CredentialVaultTestSupport
import Foundation
import Testing

/// One run of a chain script of Tests/Scripts (`NAME.sh CREDVAULT_FULL SCRATCH_DIR`, one line
/// `STEP STATUS` per step on stdout) with the built `credvault-full` and a scratch directory of
/// its own, removed afterwards.
struct SandboxChain {
    /// The script's exit status (77: the sandbox cannot run here).
    let status: Int32
    /// Each step's exit status, by name (the highest when a name repeats).
    let steps: [String: Int]
    /// What the script printed, for messages (never a secret: the scripts print none).
    let stdout: String
    let stderr: String

    /// Runs `Tests/Scripts/<script>`.
    static func run(_ script: String) throws -> SandboxChain {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("sandbox-chain-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let path = TestEnvironment.packageRoot.appendingPathComponent("Tests/Scripts/\(script)").path
        let full = TestEnvironment.credvault.deletingLastPathComponent().appendingPathComponent("credvault-full").path
        let result = try CLIChild.run(path, [full, scratch.path])
        let steps = Dictionary(
            result.stdoutText.split(separator: "\n").compactMap { line -> (String, Int)? in
                let parts = line.split(separator: " ")
                guard parts.count == 2, let status = Int(parts[1]) else { return nil }
                return (String(parts[0]), status)
            }, uniquingKeysWith: { max($0, $1) })
        return SandboxChain(status: result.status, steps: steps, stdout: result.stdoutText, stderr: result.stderr)
    }

    /// Expects every step of `expected` to have ended with its status.
    func expect(_ expected: [(String, Int)], sourceLocation: SourceLocation = #_sourceLocation) {
        for (step, status) in expected {
            #expect(
                steps[step] == status, "\(step): \(steps[step].map(String.init) ?? "missing"); output:\n\(stdout)\n\(stderr)",
                sourceLocation: sourceLocation)
        }
    }
}
