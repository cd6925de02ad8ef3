import CredentialVault
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private swtpm for one test (scripts/tpm/swtpm-start.sh): its own state, so a test can
/// restart it on the same state (a TPM "reboot"), or start a second one ("another TPM").
final class SoftwareTPM {
    let directory: String
    private var stopped = false

    /// The TCTI string the custodian takes.
    var tcti: String { "swtpm:path=\(directory)/sock" }

    /// Whether the TPM tests run: the service (scripts/services/swtpm.sh, started by
    /// scripts/test.sh) says swtpm is installed and working.
    static var isAvailable: Bool { ProcessInfo.processInfo.environment["CREDVAULT_TEST_TPM_TCTI"] != nil }

    /// Starts a fresh TPM (`shared`: a socket every local user can reach).
    init(shared: Bool = false) throws {
        let output = try Self.script("swtpm-start.sh", shared ? ["--shared"] : [])
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("SWTPM_DIR=") }) else {
            throw ScriptFailure(description: "swtpm-start.sh printed no SWTPM_DIR: \(output)")
        }
        directory = String(line.dropFirst("SWTPM_DIR=".count))
    }

    /// Starts a TPM on the state in `directory` (a copy of another TPM's `tpm2-00.permall`:
    /// that TPM, as it was when the copy was made).
    init(state directory: String) throws {
        _ = try Self.script("swtpm-start.sh", ["--state", directory])
        self.directory = directory
    }

    /// Stops it and keeps its state (in `directory`).
    func stopKeepingState() throws {
        stopped = true
        _ = try Self.script("swtpm-stop.sh", ["--keep", directory])
    }

    deinit { if !stopped { _ = try? Self.script("swtpm-stop.sh", [directory]) } }

    /// Stops it and starts it again on the same state.
    func restart() throws {
        _ = try Self.script("swtpm-stop.sh", ["--keep", directory])
        _ = try Self.script("swtpm-start.sh", ["--state", directory])
    }

    /// Stops it and removes its state.
    func stop() throws {
        stopped = true
        _ = try Self.script("swtpm-stop.sh", [directory])
    }

    /// Runs a tpm2-tools command against this TPM; its stdout.
    @discardableResult
    func tool(_ name: String, _ arguments: [String]) throws -> String {
        try Self.run("/usr/bin/\(name)", arguments, environment: ["TPM2TOOLS_TCTI": tcti])
    }

    struct ScriptFailure: Error, CustomStringConvertible {
        var description: String
    }

    static var repository: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url
    }

    static func script(_ name: String, _ arguments: [String]) throws -> String {
        try run(repository.appendingPathComponent("scripts/tpm/\(name)").path, arguments, environment: [:])
    }

    static func run(_ path: String, _ arguments: [String], environment: [String: String]) throws -> String {
        let (status, output) = try Subprocess.run(path, arguments, environment: environment)
        guard status == 0 else { throw ScriptFailure(description: "\(path) \(arguments) failed (\(status))") }
        return String(decoding: output, as: UTF8.self)
    }
}

/// What the TPM tests share.
enum TPMTest {
    /// The custodians' deadline: a minute, which swtpm meets on a loaded machine (the tests of
    /// a deadline set their own).
    static let deadline = Duration.seconds(60)
}

/// A 0700 scratch directory, removed at the end.
final class ScratchDirectory: Sendable {
    let path: String

    init() {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        var template = Array("\(base)/credvault-tpm-test.XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func sub(_ name: String) -> String { "\(path)/\(name)" }
}

