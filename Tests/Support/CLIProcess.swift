import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A running `credvault` process (or another helper) whose output is collected as it comes (so
/// that a test can react to a line, like a user reading the sign-in URL on stderr), and whose
/// exit and complete output are events a test awaits, never polls for.
///
/// Its output is read on threads of its own until the process has exited and the pipe holds
/// nothing more, not until the end of file: with processes started concurrently, Foundation
/// can leave a copy of a pipe's write end open in this process, so the end of file may never
/// come. Its input is a file, for the same reason (a child reading to the end of its input).
package final class CLIProcess: Sendable {
    private let process: Process
    private let out = PipeOutput()
    private let err = PipeOutput()
    /// Arrives when the process has exited.
    private let exited = Arrivals()

    /// The write end of the child's stdin when it was started with `holdingStdin`: its stdin
    /// ends only when this process ends (or `kill`), for helpers that wait for that end.
    private let heldStdin: Pipe?

    /// Starts `executable` (the `credvault` built beside the tests unless told otherwise) with
    /// this user's home and XDG directories, the sanitizer options and `environment`; `stdin`
    /// is its input, or with `holdingStdin` a pipe held open until it ends.
    package init(
        _ arguments: [String], executable: URL = BuiltProducts.credvault, environment: [String: String] = [:], stdin: Data? = nil,
        holdingStdin: Bool = false
    ) throws {
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        // Same home and XDG directories as the test process: the vault's device-only records
        // are sealed with this user's host secret, which both must find.
        let inherited = ProcessInfo.processInfo.environment
        var env = ["PATH": "/usr/bin:/bin", "HOME": inherited["HOME"] ?? NSTemporaryDirectory()]
        // The sanitizer options too (scripts/sanitizers.sh: suppressions, halt on error).
        for name in ["XDG_STATE_HOME", "XDG_DATA_HOME"] { env[name] = inherited[name] }
        env.merge(Sanitizers.options) { $1 }
        env.merge(environment) { $1 }
        process.environment = env
        let stdout = Self.pipe(), stderr = Self.pipe()
        heldStdin = holdingStdin ? Self.pipe() : nil
        if let heldStdin {
            process.standardInput = heldStdin
        } else {
            process.standardInput = try stdin.map(Self.input) ?? FileHandle.nullDevice
        }
        process.standardOutput = stdout
        process.standardError = stderr
        let exited = self.exited
        process.terminationHandler = { _ in exited.arrive() }
        try process.run()
        try? heldStdin?.fileHandleForReading.close()
        for (pipe, box) in [(stdout, out), (stderr, err)] {
            try? pipe.fileHandleForWriting.close()
            let fd = pipe.fileHandleForReading.fileDescriptor
            Thread.detachNewThread {
                box.read(fd, until: { exited.count > 0 })
                withExtendedLifetime(pipe) {}
            }
        }
    }

    /// A pipe whose descriptors are close-on-exec, so that a process another test starts
    /// meanwhile does not inherit them. (Set at once: `pipe2` is not in Swift's Glibc module.)
    private static func pipe() -> Pipe {
        let pipe = Pipe()
        for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] {
            _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
        }
        return pipe
    }

    /// `data` as standard input: an unlinked temporary file, read to its end.
    private static func input(_ data: Data) throws -> FileHandle {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("cv-stdin-\(UUID().uuidString)")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        return try FileHandle(forReadingFrom: url)
    }

    /// What it wrote to stdout so far (all of it after `wait`).
    package var stdout: String { out.text }
    /// What it wrote to stderr so far (all of it after `wait`).
    package var stderr: String { err.text }

    /// Waits until stderr has a line matching `predicate` (`nil` when the output ended without
    /// one), woken by each chunk the process writes; `ceiling` only stops a hang.
    package func waitForStderrLine(ceiling: Duration = .seconds(60), _ predicate: (String) -> Bool) async -> String? {
        await err.waitForLine(ceiling: ceiling, predicate)
    }

    /// Same as `waitForStderrLine`, on stdout.
    package func waitForStdoutLine(ceiling: Duration = .seconds(60), _ predicate: (String) -> Bool) async -> String? {
        await out.waitForLine(ceiling: ceiling, predicate)
    }

    /// Kills the process (SIGKILL).
    package func kill() { Glibc.kill(process.processIdentifier, SIGKILL) }

    /// Waits for the exit and the whole output (killing the process past `ceiling`, which only
    /// stops a hang), and returns the status.
    package func wait(ceiling: Duration = .seconds(120)) async throws -> Int32 {
        if await !exited.reached(1, ceiling: ceiling) {
            process.terminate()
            _ = await exited.reached(1)
        }
        _ = await out.ended.reached(1)
        _ = await err.ended.reached(1)
        return process.terminationStatus
    }

    /// Runs to completion: (status, stdout, stderr).
    package static func run(_ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil) async throws -> (Int32, String, String) {
        let process = try CLIProcess(arguments, environment: environment, stdin: stdin)
        let status = try await process.wait()
        return (status, process.stdout, process.stderr)
    }
}

/// The output of one pipe, read on a thread of its own.
package final class PipeOutput: Sendable {
    private let data = Mutex((bytes: Data(), ended: false))
    /// Arrives at each chunk read, and at the end.
    package let chunks = Arrivals()
    /// Arrives once everything has been read.
    package let ended = Arrivals()

    package init() {}

    /// What was read so far.
    package var text: String { data.withLock { String(decoding: $0.bytes, as: UTF8.self) } }

    /// Reads `fd` until its end of file, or until `exited` says the writer is gone and the pipe
    /// is empty (checked every 50 ms while nothing comes: the exit is not an event poll sees).
    package func read(_ fd: Int32, until exited: () -> Bool) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let gone = exited()  // read before looking at the pipe: what the writer wrote is in it then
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 50)
            if ready < 0 && errno == EINTR { continue }
            if ready > 0 {
                let count = Glibc.read(fd, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                data.withLock { $0.bytes.append(contentsOf: buffer[0..<count]) }
                chunks.arrive()
            } else if gone || ready < 0 {
                break
            }
        }
        data.withLock { $0.ended = true }
        chunks.arrive()
        ended.arrive()
    }

    /// Waits until a line matches `predicate` (`nil` when the output ended without one).
    package func waitForLine(ceiling: Duration, _ predicate: (String) -> Bool) async -> String? {
        while true {
            let seen = chunks.count
            let (text, isOver) = data.withLock { (String(decoding: $0.bytes, as: UTF8.self), $0.ended) }
            if let line = text.split(separator: "\n").map(String.init).first(where: predicate) { return line }
            if isOver { return nil }
            guard await chunks.reached(seen + 1, ceiling: ceiling) else { return nil }
        }
    }
}
