import Foundation
import Synchronization

/// A running `credvault` process whose output is collected as it comes (so that a test can
/// react to a line on stderr, like a user reading the sign-in URL).
final class CLIProcess: Sendable {
    private let process: Process
    private let out = DataBox()
    private let err = DataBox()

    /// The `credvault` built beside the test bundle.
    static var executable: URL {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("credvault").path) {
            url.deleteLastPathComponent()
        }
        return url.appendingPathComponent("credvault")
    }

    init(_ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil) throws {
        process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        // Same home and XDG directories as the test process: the vault's device-only records
        // are sealed with this user's host secret, which both must find.
        let inherited = ProcessInfo.processInfo.environment
        var env = ["PATH": "/usr/bin:/bin", "HOME": inherited["HOME"] ?? NSTemporaryDirectory()]
        for name in ["XDG_STATE_HOME", "XDG_DATA_HOME"] { env[name] = inherited[name] }
        env.merge(environment) { $1 }
        process.environment = env
        let stdout = Pipe(), stderr = Pipe()
        let input = stdin.map { _ in Pipe() }
        process.standardInput = input ?? FileHandle.nullDevice
        process.standardOutput = stdout
        process.standardError = stderr
        let out = self.out, err = self.err
        stdout.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            out.append(chunk)
        }
        stderr.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            err.append(chunk)
        }
        try process.run()
        if let input, let stdin {
            input.fileHandleForWriting.write(stdin)
            try input.fileHandleForWriting.close()
        }
    }

    var stdout: String { out.text }
    var stderr: String { err.text }

    /// Waits until stderr has a line matching `predicate`, or the deadline.
    func waitForStderrLine(timeout: Duration = .seconds(20), _ predicate: (String) -> Bool) async throws -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = stderr.split(separator: "\n").map(String.init).first(where: predicate) { return line }
            if !process.isRunning { return nil }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// Waits for the exit (killing the process at the deadline) and returns the status.
    func wait(timeout: Duration = .seconds(60)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                process.terminate()
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.waitUntilExit()
        try await Task.sleep(for: .milliseconds(50))  // let the pipes drain
        return process.terminationStatus
    }

    /// Runs to completion: (status, stdout, stderr).
    static func run(_ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil) async throws -> (Int32, String, String) {
        let process = try CLIProcess(arguments, environment: environment, stdin: stdin)
        let status = try await process.wait()
        return (status, process.stdout, process.stderr)
    }
}

/// Bytes appended from a pipe's handler thread.
final class DataBox: Sendable {
    private let data = Mutex(Data())
    func append(_ chunk: Data) { data.withLock { $0.append(chunk) } }
    var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }
}
