import Foundation
import CredentialVaultTestSupport
import Testing

/// The lean `credvault` (CredentialVault and the CLI library only) and its hand-over to
/// `credvault-full` for what needs the Secret Service, OpenSSL or networking libraries.
@Suite(.ownThread) final class LeanCLITests {
    let dir = TempDirectory()

    /// Private XDG directories and no session bus: the Secret Service is unreachable at once,
    /// so `--backend auto` falls back to the file and nothing touches a real keyring.
    var environment: [String: String] {
        ["HOME": dir.url.path, "XDG_DATA_HOME": dir.path("data").path, "XDG_STATE_HOME": dir.path("state").path, "PATH": "/usr/bin:/bin"]
    }

    /// Starts `executable` with a stdin pipe left open, so that a command reading its secret from
    /// stdin waits there and its process can be inspected.
    func start(_ executable: URL, _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardInput = Pipe()  // kept open by `process`
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Kills a started process (SIGKILL: it inherits the test thread's blocked signals, SIGTERM
    /// included) and reaps it.
    func stop(_ process: Process) {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits until the process `pid` is running `executable` (after its `execv`, if any) and
    /// waits for its secret on stdin, then returns the paths of the files mapped into it.
    func mappedFiles(_ pid: Int32, running executable: URL) throws -> Set<String> {
        let deadline = ContinuousClock.now + .seconds(120)  // a ceiling: the process starts at its pace
        while ContinuousClock.now < deadline {
            let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
            // Read to the end: /proc files have no size for Foundation to go by.
            let maps = String(decoding: FileHandle(forReadingAtPath: "/proc/\(pid)/maps")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            // The dynamic loader maps every needed library before main, one after another: the
            // list is complete once the command blocks in read(0, ...) for its secret (x86_64
            // syscall 0 on descriptor 0 in /proc/PID/syscall), not when one library is there.
            let syscall = String(decoding: FileHandle(forReadingAtPath: "/proc/\(pid)/syscall")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            if exe == executable.resolvingSymlinksInPath().path, syscall.hasPrefix("0 0x0 ") {
                return Set(maps.split(separator: "\n").compactMap { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(5).first.map(String.init) })
            }
            usleep(20_000)
        }
        throw CocoaError(.fileReadUnknown)
    }

    func run(_ executable: URL, _ arguments: [String]) throws -> CLIChild.Outcome {
        try CLIChild.run(arguments, executable: executable, environment: environment)
    }

    static let heavyLibraries = ["libsecret", "libglib", "libgio", "libcurl", "FoundationNetworking", "libcrypto"]

    @Test func theLeanExecutableDoesNotLoadTheSecretServiceNetworkingOrOpenSSLLibraries() throws {
        let process = try start(BuiltProducts.credvault, ["store", "svc", "acct", "--vault", dir.path("v.cvault").path])
        defer { stop(process) }
        let files = try mappedFiles(process.processIdentifier, running: BuiltProducts.credvault)
        for library in Self.heavyLibraries {
            #expect(!files.contains { $0.contains(library) }, "credvault maps \(library)")
        }
    }

    @Test func aCommandLineNamingTheSecretServiceIsHandedToTheFullExecutable() throws {
        // Same process (execv), now credvault-full with libsecret, argv[0] still credvault's.
        let process = try start(BuiltProducts.credvault, ["store", "svc", "acct", "--backend", "secret-service"])
        defer { stop(process) }
        let files = try mappedFiles(process.processIdentifier, running: BuiltProducts.full)
        #expect(files.contains { $0.contains("libsecret") })
        let argv = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(process.processIdentifier)/cmdline"))
            .split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        #expect(argv == [BuiltProducts.credvault.path, "store", "svc", "acct", "--backend", "secret-service"])
    }

    @Test(arguments: [
        ["info", "--backend", "auto"], ["info", "--backend", "auto", "--json"], ["migrate", "--from", "file", "--to", "memory"],
        ["migrate", "--from", "file", "--to", "auto", "--json"], ["auth", "status", "--bogus"], ["insforge"], ["auth", "--help"],
    ])
    func aHeavyCommandBehavesAsWhenTheFullExecutableRunsIt(arguments: [String]) throws {
        let lean = try run(BuiltProducts.credvault, arguments)
        let full = try run(BuiltProducts.full, arguments)
        #expect(lean.status == full.status)
        #expect(lean.stdout == full.stdout)
        #expect(lean.stderr == full.stderr)
        #expect(!lean.stdout.isEmpty || !lean.stderr.isEmpty)
    }

    @Test func withoutTheFullExecutableAHeavyCommandExits8WithOneLine() throws {
        let alone = dir.path("bin/credvault")
        try FileManager.default.createDirectory(at: alone.deletingLastPathComponent(), withIntermediateDirectories: true)
        // A hard link, not a copy: a copy's write descriptor, inherited by a child another test
        // forks meanwhile, makes running it fail with ETXTBSY until that child execs. A copy
        // only where linking is impossible (another file system).
        if link(BuiltProducts.credvault.path, alone.path) != 0 { try FileManager.default.copyItem(at: BuiltProducts.credvault, to: alone) }
        for arguments in [["auth", "status"], ["lookup", "svc", "acct", "--backend", "auto"]] {
            let outcome = try run(alone, arguments)
            #expect(outcome.status == 8)
            #expect(outcome.stderr.hasPrefix("credvault: "))
            #expect(outcome.stderr.contains("credvault-full"))
            #expect(outcome.stderr.split(separator: "\n").count == 1)
        }
        // The vault commands still work.
        #expect(try run(alone, ["keygen", dir.path("key").path]).status == 0)
        #expect(try run(alone, ["lookup", "svc", "acct", "--key-file", dir.path("key").path]).status == 1)
    }
}
