import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// The `credvault` tool never shows a secret where others can see it: not in its command
/// line or environment (secrets come from stdin and files), not in its output or errors (only
/// `lookup` prints the value, on stdout), and a run waiting for the vault's lock keeps no
/// copy of the passphrase.
@Suite(.ownThread) final class CLIHygieneTests {
    let dir = TempDirectory()
    let value = MaskedSecret()
    let passphrase = MaskedSecret()
    lazy var vault = dir.path("vault/v.cvault")
    lazy var passphraseFile = dir.path("passphrase")

    init() throws {
        var bytes = passphrase.data()
        defer { wipe(&bytes) }
        _ = FileManager.default.createFile(atPath: passphraseFile.path, contents: bytes, attributes: [.posixPermissions: 0o600])
        let created = try run(["init", "--kdf", "insecure-testing-only"] + unlock)
        #expect(created.status == 0, "\(created.stderr)")
    }

    var unlock: [String] { ["--vault", vault.path, "--passphrase-file", passphraseFile.path] }

    struct Outcome {
        var status: Int32
        var stdout: Data
        var stderr: String
    }

    private func start(_ arguments: [String], environment: [String: String] = [:]) throws -> (Process, Pipe, Pipe, Pipe) {
        let process = Process()
        process.executableURL = BuiltProducts.credvault
        process.arguments = arguments
        process.environment = [
            "HOME": dir.url.path, "XDG_DATA_HOME": dir.path("data").path, "XDG_STATE_HOME": dir.path("state").path,
            "PATH": "/usr/bin:/bin",
        ].merging(Sanitizers.options) { $1 }.merging(environment) { $1 }
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        return (process, input, output, errors)
    }

    /// Writes the value (when asked) straight from a wiped page, so the test keeps no copy.
    private func send(_ secret: MaskedSecret?, to input: Pipe) {
        secret?.write(to: input.fileHandleForWriting.fileDescriptor)
        try? input.fileHandleForWriting.close()
    }

    private func finish(_ process: Process, _ output: Pipe, _ errors: Pipe) -> Outcome {
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, stdout: out, stderr: String(decoding: err, as: UTF8.self))
    }

    private func run(_ arguments: [String], stdin secret: MaskedSecret? = nil) throws -> Outcome {
        let (process, input, output, errors) = try start(arguments)
        send(secret, to: input)
        return finish(process, output, errors)
    }

    /// Waits until the process sleeps in `kernelFunction` (from /proc/PID/wchan), under a
    /// ceiling of two minutes that only a hang reaches.
    private func waitUntil(_ pid: pid_t, sleepsIn kernelFunction: String) -> Bool {
        let ceiling = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < ceiling {
            if MemoryScanner.readProcFile("/proc/\(pid)/wchan").contains(kernelFunction) { return true }
            usleep(10_000)
        }
        return false
    }

    private func expectNoSecret(_ text: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!value.leaks(into: text), "\(what) shows the value", sourceLocation: sourceLocation)
        #expect(!passphrase.leaks(into: text), "\(what) shows the passphrase", sourceLocation: sourceLocation)
    }

    @Test func commandLineAndEnvironmentNeverHoldTheSecret() throws {
        let (process, input, output, errors) = try start(["store", "svc", "acct", "--portable"] + unlock)
        #expect(waitUntil(process.processIdentifier, sleepsIn: "pipe_read"), "the tool waits for the secret on stdin")
        for file in ["cmdline", "environ"] {
            let text = MemoryScanner.readProcFile("/proc/\(process.processIdentifier)/\(file)")
            #expect(!text.isEmpty)
            expectNoSecret(text, "/proc/PID/\(file)")
        }
        send(value, to: input)
        let outcome = finish(process, output, errors)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let lookup = try run(["lookup", "svc", "acct"] + unlock)
        #expect(value.occurs(in: lookup.stdout), "lookup prints the value")
    }

    @Test func outputsAndErrorsOfEveryCommandCarryNoSecret() throws {
        #expect(try run(["store", "svc", "acct"] + unlock, stdin: value).status == 0)
        let wrong = dir.path("wrong-passphrase")
        _ = FileManager.default.createFile(atPath: wrong.path, contents: Data("wrong".utf8), attributes: [.posixPermissions: 0o600])
        var runs: [(String, Outcome)] = []
        for arguments in [
            ["list"], ["list", "--json"], ["info"], ["info", "--json"], ["lookup", "svc", "missing"], ["delete", "svc", "missing"],
            ["store", "svc", "acct", "extra-argument"], ["store", "svc", "acct", "--unknown-option=x"],
        ] {
            runs.append((arguments.joined(separator: " "), try run(arguments + unlock, stdin: value)))
        }
        runs.append(("wrong passphrase", try run(["lookup", "svc", "acct", "--vault", vault.path, "--passphrase-file", wrong.path])))
        runs.append(("no such passphrase file", try run(["lookup", "svc", "acct", "--vault", vault.path, "--passphrase-file", "/nonexistent"])))
        var bytes = try TestVault.bytes(vault)
        bytes[bytes.count - 1] ^= 1
        try TestVault.write(bytes, to: vault)
        runs.append(("damaged vault", try run(["lookup", "svc", "acct"] + unlock)))
        #expect(Set(runs.map(\.1.status)).count >= 4, "successes and several kinds of failure: \(runs.map(\.1.status))")
        for (what, outcome) in runs {
            expectNoSecret(String(decoding: outcome.stdout, as: UTF8.self), "stdout of \(what)")
            expectNoSecret(outcome.stderr, "stderr of \(what)")
        }
    }

    /// A value of 512 bytes and one of 300 kB (read in several growing buffers).
    @Test(.enabled(if: !Sanitizers.active, "memory scans are meaningless under ASan/TSan"), arguments: [512, 300_000])
    func aRunWaitingForTheLockKeepsNoCopyOfThePassphraseAndOneOfTheValue(size: Int) throws {
        let value = MaskedSecret(count: size)
        // The holder keeps the lock, and the tool waits for it, far longer than the two scans
        // can take on a loaded machine (the CLI's own wait is 10 s): the lock is released only
        // when the holder is killed after them.
        let holder = try HelperProcess(["hold-lock", vault.path, "600"], environment: [:])
        try holder.waitForLine(startingWith: "locked")
        let (process, input, output, errors) = try start(
            ["store", "svc", "acct"] + unlock, environment: ["CREDVAULT_TEST_LOCK_WAIT_SECONDS": "600"])
        send(value, to: input)
        // Unlocked, the value read, now polling for the lock (it sleeps between tries).
        #expect(waitUntil(process.processIdentifier, sleepsIn: "nanosleep"), "the tool waits for the lock")
        let forPassphrase = MemoryScanner.scan(for: passphrase, pid: process.processIdentifier)
        let forValue = MemoryScanner.scan(for: value, pid: process.processIdentifier)
        holder.kill()
        let outcome = finish(process, output, errors)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(forPassphrase.failure == nil && forPassphrase.bytesScanned > 0, "\(forPassphrase)")
        #expect(forPassphrase.hits.isEmpty, "the passphrase, while the tool waits to save: \(forPassphrase)")
        // The value being saved is alive, once: its head and its tail, nothing else.
        let addresses = forValue.hits.map(\.address).sorted()
        #expect(
            addresses.count == 2 && addresses[1] - addresses[0] == UInt(value.count - 32),
            "the value, while the tool waits to save: one copy expected, \(forValue)")
    }
}
