import CredentialVaultTestSupport
import Foundation

/// Runs a program to completion (killed past `timeout`) and collects its output.
struct ChildProcess {
    struct Result {
        var status: Int32
        var stdout: Data
        var stderr: String
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    enum Failure: Error, CustomStringConvertible {
        case timedOut(String)
        var description: String {
            switch self {
            case .timedOut(let what): "\(what) did not finish in time and was killed"
            }
        }
    }

    /// Runs `executable` with `arguments`, feeding `input` on stdin. `environment` replaces the
    /// variables it names; `nil` values remove them. `timeout` is a ceiling that only keeps a
    /// hung child from hanging the test: past it the child is killed and `timedOut` thrown.
    static func run(
        _ executable: String, _ arguments: [String], input: Data = Data(),
        environment overrides: [String: String?] = [:], timeout: Duration = .seconds(120)
    ) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment(overrides)

        // Files rather than pipes: a chatty child can never block on a full pipe.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cv-child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inURL = directory.appendingPathComponent("in")
        let outURL = directory.appendingPathComponent("out")
        let errURL = directory.appendingPathComponent("err")
        try input.write(to: inURL)
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let stdin = try FileHandle(forReadingFrom: inURL)
        let stdout = try FileHandle(forWritingTo: outURL)
        let stderr = try FileHandle(forWritingTo: errURL)
        defer { try? stdin.close(); try? stdout.close(); try? stderr.close() }
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr

        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        if exited.wait(timeout: .now() + timeout.seconds) == .timedOut {
            process.terminate()
            process.waitUntilExit()
            throw Failure.timedOut("\(executable) \(arguments.joined(separator: " "))")
        }
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: try Data(contentsOf: outURL),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// This process's environment with `overrides` applied (`nil` removes a variable).
    static func environment(_ overrides: [String: String?]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for (name, value) in overrides { environment[name] = value }
        return environment
    }
}
