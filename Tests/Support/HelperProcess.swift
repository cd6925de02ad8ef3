import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A `credvault-testhelper` process whose stdout is read line by line, for tests that kill it.
package final class HelperProcess {
    package struct Died: Error, CustomStringConvertible {
        package var description: String
    }

    package let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private var buffer = Data()
    private var finished = false
    /// Every line read so far.
    package private(set) var lines: [String] = []

    package init(_ arguments: [String], environment: [String: String]) throws {
        process.executableURL = BuiltProducts.helper
        process.arguments = arguments
        process.environment = environment.merging(Sanitizers.options) { $1 }
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    package var pid: pid_t { process.processIdentifier }

    /// The next line, or `nil` at end of output.
    package func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                lines.append(line)
                return line
            }
            if finished { return nil }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { finished = true } else { buffer.append(chunk) }
        }
    }

    /// Reads lines until one starts with `prefix`; throws if the helper ends first.
    @discardableResult
    package func waitForLine(startingWith prefix: String) throws -> String {
        while let line = nextLine() {
            if line.hasPrefix(prefix) { return line }
        }
        throw Died(description: "helper ended before printing '\(prefix)': \(stderrText())")
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
