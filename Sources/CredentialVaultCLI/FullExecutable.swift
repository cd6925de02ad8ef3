#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `credvault-full`, the executable with every command and backend, installed next to the lean
/// `credvault`. The lean one hands a command line over to it git-style: `execv` with the same
/// arguments (`argv[0]` included, so it still reads as the `credvault` the user ran), the same
/// environment and the same standard streams, so the full one behaves as if it had been run
/// directly. Nothing has been read from stdin or written to stdout before. Secrets never travel
/// on the command line (options only name the files that hold them).
package enum FullExecutable {
    /// Its file name.
    package static let name = "credvault-full"

    /// Replaces this process with `credvault-full` found next to the running executable
    /// (`/proc/self/exe`). Returns only when that is impossible: exit code 8 (not available)
    /// after one line on stderr saying that `needing` needs it.
    package static func handOver(needing: String) -> Int32 {
        let io = TerminalIO()
        guard let me = runningExecutable() else {
            io.error("\(needing) needs \(name), and the running executable cannot be found (/proc/self/exe)")
            return ExitCode.notAvailable
        }
        let path = me.deletingLastPathComponent().appendingPathComponent(name).path
        guard access(path, X_OK) == 0 else {
            io.error("\(needing) needs \(name), which is not installed next to \(me.path)")
            return ExitCode.notAvailable
        }
        // SIGPIPE as this process found it, so that the full one records it (and `exec` hands
        // it on to its command) as it was, not as this process set it.
        InheritedSignals.restoreBrokenPipes()
        execv(path, CommandLine.unsafeArgv)
        InheritedSignals.ignoreBrokenPipes()
        io.error("\(needing) needs \(name): cannot run \(path): \(String(cString: strerror(errno)))")
        return ExitCode.notAvailable
    }

    /// The running executable's path, symbolic links resolved.
    static func runningExecutable() -> URL? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return URL(fileURLWithPath: String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}
