import Foundation
import CredentialVaultTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// No secret in a core dump: both `credvault` executables make
/// themselves non-dumpable with a zero core size limit before reading anything, and the
/// library offers the same as `ProcessHardening.disableCoreDumps()`.
///
/// Observed from outside, on a process started with an unlimited core size (`prlimit`) under
/// an unprivileged uid (`setpriv`; the test runs as root, whose own processes' `/proc` files
/// are root's either way): `/proc/PID/limits` shows the core limit, and the owner of
/// `/proc/PID/mem` is root exactly when the process is not dumpable.
@Suite(.ownThread) final class CoreDumpTests {
    let dir = TempDirectory()
    static let unprivileged: uid_t = 65534

    /// Starts `executable ARGUMENTS` as `unprivileged` with an unlimited core size and a stdin
    /// pipe held open, so that it waits there.
    func start(_ executable: URL, _ arguments: [String]) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        let id = String(Self.unprivileged)
        process.arguments = ["--core=unlimited", "--", "/usr/bin/setpriv", "--reuid=\(id)", "--regid=\(id)", "--clear-groups", "--", executable.path] + arguments
        process.environment = CLIChild.environment(dir)
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, input, output)
    }

    struct DumpState: Equatable, CustomStringConvertible {
        var coreLimit: String
        var dumpable: Bool
        var description: String { "core limit \(coreLimit), \(dumpable ? "dumpable" : "not dumpable")" }
    }

    /// The core size limit (soft and hard) and dumpability of `pid`, once it runs `executable`:
    /// polled until it is `wanted`, or the last state seen when a ceiling of two minutes passes
    /// first (only a hang ends there: a child starting slowly on a loaded machine is waited for).
    func dumpState(_ pid: Int32, running executable: URL, until wanted: DumpState) -> DumpState? {
        let deadline = ContinuousClock.now + .seconds(120)
        var last: DumpState?
        while ContinuousClock.now < deadline {
            let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
            let limits = String(decoding: FileHandle(forReadingAtPath: "/proc/\(pid)/limits")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            var info = stat()
            if exe == executable.resolvingSymlinksInPath().path, stat("/proc/\(pid)/mem", &info) == 0,
                let line = limits.split(separator: "\n").first(where: { $0.hasPrefix("Max core file size") })
            {
                let fields = line.dropFirst("Max core file size".count).split(separator: " ")
                last = DumpState(coreLimit: fields.prefix(2).joined(separator: " "), dumpable: info.st_uid == Self.unprivileged)
                if last == wanted { return last }
            }
            usleep(10_000)
        }
        return last
    }

    static let hardened = DumpState(coreLimit: "0 0", dumpable: false)

    @Test(arguments: [
        (["store", "svc", "acct", "--backend", "memory"], false),
        // Handed over to credvault-full (execv makes a process dumpable again): it hardens itself too.
        (["store", "svc", "acct", "--backend", "secret-service"], true),
    ])
    func bothExecutablesAreNotDumpableAndHaveNoCoreLimit(arguments: [String], handedOver: Bool) throws {
        let (process, input, _) = try start(BuiltProducts.credvault, arguments)
        defer {
            try? input.fileHandleForWriting.close()
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let running = handedOver ? BuiltProducts.full : BuiltProducts.credvault
        let state = dumpState(process.processIdentifier, running: running, until: Self.hardened)
        #expect(state == Self.hardened, "credvault \(arguments) waiting for its secret: \(state.map(\.description) ?? "never ran")")
    }

    @Test func theLibraryCallDisablesCoreDumps() throws {
        let (process, input, output) = try start(BuiltProducts.helper, ["disable-core-dumps"])
        defer {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
        var lines = ""
        while !lines.contains("after") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            lines += String(decoding: chunk, as: UTF8.self)
        }
        #expect(lines.hasPrefix("before false\nafter true\n"), "\(lines)")
        let state = dumpState(process.processIdentifier, running: BuiltProducts.helper, until: Self.hardened)
        #expect(state == Self.hardened, "\(state.map(\.description) ?? "never ran")")
    }
}
