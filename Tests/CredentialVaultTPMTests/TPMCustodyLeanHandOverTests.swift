import CredentialVaultTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The lean `credvault` cannot ask a TPM, so it hands a command over to `credvault-full` when
/// this user reaches one (a vault moved to TPM custody is anchored there). That decision must
/// not depend on what is at the vault's path when the lean one looks: whoever writes the user's
/// files can have nothing there at that moment and the copy from before the move there when the
/// command opens the vault a moment later (inotify tells them when). Each test has a swtpm of
/// its own.
@Suite(.enabled(if: SoftwareTPM.isAvailable, "needs swtpm (scripts/test.sh starts scripts/services/swtpm.sh)"))
struct TPMCustodyLeanHandOverTests {
    @Test func aPreMoveCopyPutInPlaceAfterTheLeanCLILookedIsStillRefused() async throws {
        try await offThePool {
            let tpm = try SoftwareTPM()
            let dir = TempDirectory()
            let environment = [
                "HOME": dir.url.path, "XDG_DATA_HOME": dir.path("data").path, "XDG_STATE_HOME": dir.path("state").path,
                "PATH": "/usr/bin:/bin", "CREDVAULT_TPM_TCTI": tpm.tcti,
            ].merging(Sanitizers.options) { $1 }
            let passphrase = dir.path("passphrase")
            try Data("lean hand-over\n".utf8).write(to: passphrase)
            _ = chmod(passphrase.path, 0o600)
            let vault = dir.path("vaults/v.cvault")
            let common = ["--vault", vault.path, "--passphrase-file", passphrase.path]
            func run(_ arguments: [String], stdin: String = "") throws -> CLIChild.Outcome {
                try CLIChild.run(arguments, environment: environment, stdin: Data(stdin.utf8))
            }
            #expect(try run(["init"] + common + ["--kdf", "insecure-testing-only"]).status == 0)
            #expect(try run(["store"] + common + ["app", "token"], stdin: "pre-move").status == 0)
            // What whoever writes the user's files keeps: the vault and the state directory.
            let preMove = try Data(contentsOf: vault)
            try FileManager.default.copyItem(at: dir.path("state"), to: dir.path("state-pre-move"))
            #expect(try run(["custody", "tpm"] + common).status == 0)
            #expect(try run(["store"] + common + ["app", "token"], stdin: "post-move").status == 0)
            try FileManager.default.removeItem(at: dir.path("state"))
            try FileManager.default.moveItem(at: dir.path("state-pre-move"), to: dir.path("state"))
            // Nothing at the vault's path while credvault decides who runs the command...
            try FileManager.default.removeItem(at: vault)
            let process = Process()
            process.executableURL = BuiltProducts.credvault
            process.arguments = ["store"] + common + ["app", "token"]
            process.environment = environment
            let input = Pipe(), errors = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
            // ... which it has decided once it waits for the secret on stdin (x86_64 read, on
            // descriptor 0: /proc/PID/syscall), before it opens the vault.
            #expect(waitForStdinRead(process.processIdentifier))
            // ... and the pre-move copy there when it opens it.
            try preMove.write(to: vault)
            _ = chmod(vault.path, 0o600)
            try input.fileHandleForWriting.write(contentsOf: Data("written into the pre-move copy".utf8))
            try input.fileHandleForWriting.close()
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 13, "\(stderr)")
            #expect(stderr.contains("the tpm custodian holds this vault's rollback counter"), "\(stderr)")
        }
    }

    /// Whether the process `pid` came to block reading its stdin (a ceiling of 120 s stops a hang).
    private func waitForStdinRead(_ pid: Int32) -> Bool {
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            let syscall = String(decoding: FileHandle(forReadingAtPath: "/proc/\(pid)/syscall")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            if syscall.hasPrefix("0 0x0 ") { return true }
            usleep(20_000)
        }
        return false
    }
}
