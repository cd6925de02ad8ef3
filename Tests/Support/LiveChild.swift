import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process a test talks to while it runs: its PID, its stdout read line by line, its
/// stdin open (or closed, or a file), signals sent to it, then its end. `posix_spawn` with
/// default signal dispositions and an empty mask, as from a shell; every other descriptor of
/// the test process is close-on-exec. Each wait has a deadline; a child still running when
/// the test ends is killed.
package final class LiveChild {
    /// How the child's stdin is set up.
    package enum Input {
        /// A pipe the test keeps open (and may close with `closeStdin`).
        case pipe
        /// Descriptor 0 closed.
        case closed
        /// A file, opened for reading.
        case file(URL)
    }

    package let pid: pid_t
    private var stdinWriter: Int32 = -1
    private let reader: LineReader
    private var status: Int32?

    /// `stdoutCapacity`: the bytes the stdout pipe holds before the child's writes block (a
    /// test bounds how far the child can run ahead of what it read; at least a page).
    /// `stderr`: a file for the child's stderr (by default it shares the test's).
    package init(
        _ executable: URL, _ arguments: [String], environment: [String: String], stdin: Input = .pipe,
        stdoutCapacity: Int32? = nil, stderr: URL? = nil
    ) throws {
        // Close-on-exec from birth: tests run in parallel, and a pipe end inherited by another
        // test's child would keep this one's reader from ever seeing the end of the output.
        guard let inputPipe = Descriptors.pipe(), let outputPipe = Descriptors.pipe() else { throw POSIXError(.EMFILE) }
        let input = [inputPipe.read, inputPipe.write], output = [outputPipe.read, outputPipe.write]
        // F_SETPIPE_SZ (1031): Glibc's module does not export it.
        if let stdoutCapacity, fcntl(output[0], 1031, stdoutCapacity) < 0 {
            (input + output).forEach { close($0) }
            throw POSIXError(.EINVAL)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        switch stdin {
        case .pipe: posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        case .closed: posix_spawn_file_actions_addclose(&actions, 0)
        case .file(let url): posix_spawn_file_actions_addopen(&actions, 0, url.path, O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        if let stderr { posix_spawn_file_actions_addopen(&actions, 2, stderr.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600) }
        // The child gets 0, 1 and 2 only: whatever other tests have open at this moment stays here.
        Descriptors.closeInChild(from: 3, &actions)
        var attributes = ShellLikeSpawn.attributes()
        defer { posix_spawnattr_destroy(&attributes) }
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, executable.path, &actions, &attributes, argv, envp)
        close(input[0])
        close(output[1])
        guard spawned == 0 else {
            close(input[1])
            close(output[0])
            throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL)
        }
        pid = child
        if case .pipe = stdin { stdinWriter = input[1] } else { close(input[1]) }
        reader = LineReader(FileHandle(fileDescriptor: output[0], closeOnDealloc: true), keepsUnfinishedLine: false)
    }

    deinit {
        if status == nil {
            kill(pid, SIGKILL)
            _ = wait()
        }
        if stdinWriter >= 0 { close(stdinWriter) }
    }

    /// Writes `data` to the child's stdin pipe (small: it fits the pipe's buffer).
    package func write(_ data: Data) {
        data.withUnsafeBytes { _ = Glibc.write(stdinWriter, $0.baseAddress, $0.count) }
    }

    /// Closes the write end of the child's stdin pipe.
    package func closeStdin() {
        if stdinWriter >= 0 { close(stdinWriter) }
        stdinWriter = -1
    }

    /// The next line of the child's stdout (without its newline); `nil` at its end or when no
    /// line came within `seconds`.
    package func nextLine(within seconds: Int32 = 20) -> String? {
        reader.next(within: .seconds(Int(seconds)))
    }

    /// Waits (at most `seconds`, then SIGKILL) for the child's end: its raw wait status.
    @discardableResult
    package func wait(within seconds: Double = 20) -> Int32 {
        if let status { return status }
        // A child that hangs is killed (and then reported by its signal), never waited for forever.
        let watchdog = DispatchWorkItem { [pid] in kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: watchdog)
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        watchdog.cancel()
        status = raw
        return raw
    }

    /// Whether the child still runs (without waiting: an ended child is reaped, its status kept
    /// for `wait`).
    package var isRunning: Bool {
        if status != nil { return false }
        var raw: Int32 = 0
        let reaped = waitpid(pid, &raw, WNOHANG)
        if reaped == pid { status = raw }
        return reaped == 0
    }

    /// The exit code, or `nil` when a signal ended it.
    package static func exitCode(_ status: Int32) -> Int32? { status & 0x7F == 0 ? (status >> 8) & 0xFF : nil }
    /// The signal that ended it, if one did.
    package static func signal(_ status: Int32) -> Int32? { status & 0x7F == 0 ? nil : status & 0x7F }
}
