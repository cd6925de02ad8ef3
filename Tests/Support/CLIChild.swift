import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs `credvault` (or `credvault-full`, or any other program) to its end as a real child
/// process, with exactly the standard output and standard error a test asks for: a pipe,
/// `/dev/full`, a closed descriptor, or a pipe whose reader has already gone. `posix_spawn` directly, because Foundation's `Process` cannot start a child
/// with a closed stdout. The child gets default signal dispositions and an empty signal mask,
/// as from a shell.
package enum CLIChild {
    /// Where the child's stdout (or stderr) goes.
    package enum Output: CustomStringConvertible {
        /// A pipe the test reads to the end.
        case pipe
        /// `/dev/full`: every write fails with `ENOSPC`.
        case devFull
        /// The descriptor closed: every write fails with `EBADF`.
        case closed
        /// A pipe whose read end is closed before the child starts: `SIGPIPE` / `EPIPE`.
        case brokenPipe

        package var description: String {
            switch self {
            case .pipe: "a pipe"
            case .devFull: "/dev/full"
            case .closed: "a closed descriptor"
            case .brokenPipe: "a pipe without reader"
            }
        }
    }

    /// How the child ended and what it wrote.
    package struct Outcome {
        /// The exit status, or `128 + signal` when a signal ended it.
        package var status: Int32
        /// The signal that ended it, if one did.
        package var signal: Int32?
        package var stdout: Data
        package var stderr: String
        /// `stdout` as UTF-8 text.
        package var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// This process's environment with `overrides` applied (a `nil` value removes a variable).
    package static func inherited(_ overrides: [String: String?]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for (name, value) in overrides { environment[name] = value }
        return environment
    }

    /// A private environment in `dir` (XDG directories, HOME, a minimal PATH) plus `extra`.
    package static func environment(_ dir: TempDirectory, _ extra: [String: String] = [:]) -> [String: String] {
        ["HOME": dir.url.path, "XDG_DATA_HOME": dir.path("data").path, "XDG_STATE_HOME": dir.path("state").path, "PATH": "/usr/bin:/bin"]
            .merging(Sanitizers.options) { $1 }.merging(extra) { $1 }
    }

    /// Runs `executable ARGUMENTS` (`argv` given as raw bytes, so tests can pass bytes that are
    /// not UTF-8) in `directory`, feeding `stdin` (or the file `stdinFile`, for input larger
    /// than a pipe holds), and waits for it: at most `timeout` seconds (a ceiling for a hang,
    /// not a speed), then it is killed with `SIGKILL`. `Outcome.stderr` is empty unless
    /// `stderr` is `.pipe`.
    package static func run(
        rawArguments: [[UInt8]], executable: URL = BuiltProducts.credvault, environment: [String: String],
        directory: URL? = nil, stdin: Data = Data(), stdinFile: URL? = nil, stdout: Output = .pipe, stderr: Output = .pipe,
        timeout: Double = 300
    ) throws -> Outcome {
        // Close-on-exec from birth: no child of a test running in parallel inherits them.
        guard let inputPipe = Descriptors.pipe(), let outputPipe = Descriptors.pipe(), let errorsPipe = Descriptors.pipe() else {
            throw POSIXError(.EMFILE)
        }
        var input = [inputPipe.read, inputPipe.write], output = [outputPipe.read, outputPipe.write]
        var errors = [errorsPipe.read, errorsPipe.write]
        // The secret fits the pipe buffer: written before the child starts, so no thread is needed.
        precondition(stdin.count < 65536)
        stdin.withUnsafeBytes { _ = Glibc.write(input[1], $0.baseAddress, $0.count) }
        close(input[1])

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdinFile {
            posix_spawn_file_actions_addopen(&actions, 0, stdinFile.path, O_RDONLY, 0)
        } else {
            posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        }
        attach(stdout, to: 1, pipe: &output, &actions)
        attach(stderr, to: 2, pipe: &errors, &actions)
        Descriptors.closeInChild(from: 3, &actions)

        var attributes = ShellLikeSpawn.attributes()
        defer { posix_spawnattr_destroy(&attributes) }

        // In `directory`: through `env --chdir` (posix_spawn's addchdir is a GNU extension
        // Swift does not see).
        let program = directory == nil ? executable.path : "/usr/bin/env"
        let prefix = directory.map { [Array("env".utf8), Array("--chdir".utf8), Array($0.path.utf8)] } ?? []
        let argv = (prefix + [Array(executable.path.utf8)] + rawArguments).map { bytes -> UnsafeMutablePointer<CChar>? in
            let c = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            for (i, b) in bytes.enumerated() { c[i] = CChar(bitPattern: b) }
            c[bytes.count] = 0
            return c
        } + [nil]
        // Every child gets the sanitizer options (and so the LeakSanitizer suppressions of
        // scripts/sanitizers/lsan.supp), also when the test gave an environment of its own; an
        // option the test sets itself wins. Without this a child of a test with a private
        // environment ran with none, and the documented suppressions never applied to it.
        let withSanitizers = environment.merging(Sanitizers.options) { own, _ in own }
        let envp = withSanitizers.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { $0?.deallocate() }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        close(input[0])
        close(output[1])
        close(errors[1])
        guard spawned == 0 else {
            if output[0] >= 0 { close(output[0]) }
            if errors[0] >= 0 { close(errors[0]) }
            throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL)
        }
        // A child that hangs is killed (and then reported by its signal), never waited for forever.
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        let (out, err) = readToEnd(output[0], errors[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        watchdog.cancel()
        let signal = status & 0x7F
        return Outcome(
            status: signal == 0 ? (status >> 8) & 0xFF : 128 + signal, signal: signal == 0 ? nil : signal,
            stdout: out, stderr: String(decoding: err, as: UTF8.self))
    }

    /// The child's descriptor `fd` (1 or 2) as `output` says; `pipe` is the test's pipe for it
    /// (its read end closed, and set to -1, for `.brokenPipe`).
    private static func attach(_ output: Output, to fd: Int32, pipe: inout [Int32], _ actions: inout posix_spawn_file_actions_t) {
        switch output {
        case .pipe: posix_spawn_file_actions_adddup2(&actions, pipe[1], fd)
        case .devFull: posix_spawn_file_actions_addopen(&actions, fd, "/dev/full", O_WRONLY, 0)
        case .closed: posix_spawn_file_actions_addclose(&actions, fd)
        case .brokenPipe:
            close(pipe[0])
            pipe[0] = -1
            posix_spawn_file_actions_adddup2(&actions, pipe[1], fd)
        }
    }

    /// `run` with UTF-8 arguments.
    package static func run(
        _ arguments: [String], executable: URL = BuiltProducts.credvault, environment: [String: String],
        directory: URL? = nil, stdin: Data = Data(), stdinFile: URL? = nil, stdout: Output = .pipe, stderr: Output = .pipe,
        timeout: Double = 300
    ) throws -> Outcome {
        try run(
            rawArguments: arguments.map { Array($0.utf8) }, executable: executable, environment: environment, directory: directory,
            stdin: stdin, stdinFile: stdinFile, stdout: stdout, stderr: stderr, timeout: timeout)
    }

    /// Runs the program at `path` with this process's environment, `overrides` applied (a
    /// `nil` value removes a variable): for tools (`secret-tool`, `busctl`, a helper script)
    /// and the CLI run against this process's D-Bus. Killed past `timeout` seconds (a ceiling
    /// for a hang).
    package static func run(
        _ path: String, _ arguments: [String], stdin: Data = Data(), inheriting overrides: [String: String?] = [:],
        timeout: Double = 120
    ) throws -> Outcome {
        try run(arguments, executable: URL(fileURLWithPath: path), environment: inherited(overrides), stdin: stdin, timeout: timeout)
    }

    /// Reads both pipes (`-1`: none) to their ends, as the child writes them (a child that
    /// fills one pipe while the other is read never blocks), and closes them.
    private static func readToEnd(_ out: Int32, _ err: Int32) -> (Data, Data) {
        var data = [Data(), Data()]
        var open = [out, err]
        var buffer = [UInt8](repeating: 0, count: 65536)
        while open.contains(where: { $0 >= 0 }) {
            var ready = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if poll(&ready, nfds_t(ready.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for i in open.indices where open[i] >= 0 && ready[i].revents != 0 {
                let n = buffer.withUnsafeMutableBytes { Glibc.read(open[i], $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n > 0 {
                    data[i].append(contentsOf: buffer[..<n])
                } else {
                    close(open[i])
                    open[i] = -1
                }
            }
        }
        for fd in open where fd >= 0 { close(fd) }
        return (data[0], data[1])
    }
}
