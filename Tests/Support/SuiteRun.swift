import Foundation

/// One run of an external test suite (pytest, git's shell harness): its exit status and
/// everything it wrote to stdout and stderr, interleaved as a terminal shows them.
struct SuiteRun {
    let status: Int32
    let output: String

    /// Runs `executable` with `arguments` in `environment` (and `directory`, when given), stdin
    /// empty, stdout and stderr into one file (never a pipe that a chatty suite could fill), and
    /// waits for it to end: the suites bound their own steps.
    init(_ executable: String, _ arguments: [String], environment: [String: String], directory: URL? = nil) throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("cv-suite-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.currentDirectoryURL = directory
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        process.waitUntilExit()
        status = process.terminationStatus
        output = String(decoding: try Data(contentsOf: log), as: UTF8.self)
    }
}
