import CredentialVaultTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process through posix_spawn and waitpid, with pipes for stdin and stdout (stderr
/// inherited). Foundation's `Process.waitUntilExit` was seen waiting forever here for a script
/// that had exited (left a zombie): waitpid has no such failure mode.
///
/// The child gets descriptors 0, 1 and 2 only. tpm2-tss opens its swtpm sockets without
/// close-on-exec, and swtpm-start.sh leaves a daemon running: a spawn while another test's
/// custodian talked to its swtpm gave that daemon a copy of the connection, and swtpm, which
/// serves one connection at a time, waited on it until the daemon exited (four TPM tests timed
/// out together at their 60 s deadline in a CI run).
final class Subprocess {
    let pid: pid_t
    private(set) var input: Int32
    let output: Int32

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        // Close-on-exec from birth: the child gets only its dup2'ed stdin and stdout (dup2
        // clears the flag), and no other thread's spawn gets them at all.
        guard let toChildPipe = Descriptors.pipe() else { throw Failure(description: "pipe: \(errno)") }
        guard let fromChildPipe = Descriptors.pipe() else {
            close(toChildPipe.read)
            close(toChildPipe.write)
            throw Failure(description: "pipe: \(errno)")
        }
        let toChild = [toChildPipe.read, toChildPipe.write], fromChild = [fromChildPipe.read, fromChildPipe.write]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        Descriptors.closeInChild(from: 3, &actions)
        let env = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
        var cArguments = ([path] + arguments).map { strdup($0) } + [nil]
        var cEnvironment = env.map { strdup($0) } + [nil]
        defer {
            cArguments.forEach { free($0) }
            cEnvironment.forEach { free($0) }
        }
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, nil, &cArguments, &cEnvironment)
        close(toChild[0])
        close(fromChild[1])
        guard rc == 0 else {
            close(toChild[1])
            close(fromChild[0])
            throw Failure(description: "cannot start \(path): \(String(cString: strerror(rc)))")
        }
        pid = child
        input = toChild[1]
        output = fromChild[0]
    }

    deinit {
        closeInput()
        close(output)
    }

    func write(_ text: String) { write(Array(text.utf8)) }

    func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = Glibc.write(input, raw.baseAddress! + done, raw.count - done)
                if n <= 0 { break }
                done += n
            }
        }
    }

    func closeInput() {
        if input >= 0 { close(input) }
        input = -1
    }

    /// One line of output (without the newline); "" at end of output.
    func readLine() -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while Glibc.read(output, &byte, 1) == 1, byte != 0x0A { bytes.append(byte) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The rest of the output, to end of file.
    func readAll() -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = Glibc.read(output, &buffer, buffer.count)
            if n <= 0 { break }
            bytes += buffer[..<n]
        }
        return bytes
    }

    /// Waits for the exit; the exit status (128 + signal when killed).
    @discardableResult
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Runs to the end: stdin gets `stdin` and is closed; returns the status and the output.
    static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:], stdin: [UInt8] = []) throws -> (status: Int32, output: [UInt8]) {
        let process = try Subprocess(path, arguments, environment: environment)
        process.write(stdin)
        process.closeInput()
        let output = process.readAll()
        return (process.wait(), output)
    }
}
