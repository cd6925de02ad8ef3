import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Starts a whole process the way a shell does (`posix_spawn`), stdin from a file or
/// /dev/null, stdout and stderr to /dev/null, and waits for it. Everything that can be prepared
/// (argument and environment strings, file actions) is prepared before the clock starts.
final class SpawnedCommand {
    let executable: String
    private var argv: [UnsafeMutablePointer<CChar>?]
    private var envp: [UnsafeMutablePointer<CChar>?]
    private var actions = posix_spawn_file_actions_t()

    init(_ arguments: [String], environment: [String: String], stdin: String = "/dev/null") {
        executable = arguments[0]
        argv = arguments.map { strdup($0) } + [nil]
        envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    }

    deinit {
        posix_spawn_file_actions_destroy(&actions)
        for pointer in argv + envp { free(pointer) }
    }

    /// Runs the command once; throws unless it exits with status 0.
    func run() throws {
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard rc == 0 else { throw BenchError("cannot start \(executable): \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw BenchError("waitpid failed for \(executable)") }
        }
        // WIFEXITED && WEXITSTATUS == 0 (the macros do not import).
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw BenchError("\(executable) failed (wait status \(status))")
        }
    }
}

/// Runs a command to completion and returns its stdout (for untimed set-up and checks).
func runCapturing(_ arguments: [String], environment: [String: String], input: Data? = nil) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    process.environment = environment
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    let inputPipe = Pipe()
    process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
    try process.run()
    if let input {
        inputPipe.fileHandleForWriting.write(input)
        try inputPipe.fileHandleForWriting.close()
    }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchError("\(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
    }
    return data
}
