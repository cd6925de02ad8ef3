import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A helper process (`credvault-testhelper` unless told otherwise) whose stdout is read line by
/// line, for tests that wait for what it says, send it lines, or kill it.
package final class HelperProcess {
    package struct Died: Error, CustomStringConvertible {
        package var description: String
    }

    package let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private let reader: LineReader
    /// The write end of the helper's stdin, when it was started `holdingStdin`.
    private let input: Pipe?
    /// Every line read so far.
    package private(set) var lines: [String] = []

    /// Starts `executable` with `arguments` and `environment` (plus this process's sanitizer
    /// options). With `holdingStdin` its stdin is a pipe held open until this object goes (for
    /// helpers that take commands with `send`, or that end when their input does).
    package init(
        _ arguments: [String], executable: URL = BuiltProducts.helper, environment: [String: String], holdingStdin: Bool = false
    ) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment.merging(Sanitizers.options) { $1 }
        input = holdingStdin ? Pipe() : nil
        if let input { process.standardInput = input }
        process.standardOutput = output
        process.standardError = errors
        reader = LineReader(output, keepsUnfinishedLine: false)
        try process.run()
    }

    package var pid: pid_t { process.processIdentifier }

    /// The next line, or `nil` at end of output.
    package func nextLine() -> String? {
        guard let line = reader.next() else { return nil }
        lines.append(line)
        return line
    }

    /// Reads lines until one starts with `prefix`; throws if the helper ends first.
    @discardableResult
    package func waitForLine(startingWith prefix: String) throws -> String {
        while let line = nextLine() {
            if line.hasPrefix(prefix) { return line }
        }
        process.waitUntilExit()
        throw Died(description: "helper ended before printing '\(prefix)': \(stderrText())")
    }

    /// Sends `line` to the helper's stdin (started `holdingStdin`).
    package func send(_ line: String) {
        input?.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// SIGKILL, reap, and read whatever it printed before dying.
    package func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        while nextLine() != nil {}
    }

    /// Waits for a normal end and reads the rest of the output.
    package func waitForExit() -> Int32 {
        while nextLine() != nil {}
        process.waitUntilExit()
        return process.terminationStatus
    }

    package func stderrText() -> String {
        if process.isRunning { return "" }
        return String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    /// The number N of the last line "WORD N", or -1.
    package func lastNumber(after word: String) -> Int {
        for line in lines.reversed() where line.hasPrefix(word + " ") {
            if let n = Int(line.dropFirst(word.count + 1)) { return n }
        }
        return -1
    }
}

/// Settings read from the environment so that scripts can run the long versions.
package enum ReliabilitySettings {
    package static func integer(_ name: String, default value: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0) } ?? value
    }

    /// SIGKILLs per crash scenario (CI: 20; `scripts/reliability/crash.sh --kills N`).
    package static var kills: Int { integer("CREDVAULT_CRASH_KILLS", default: 20) }
}
