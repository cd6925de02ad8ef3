import CredentialVaultTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// scripts/tpm/swtpm-stop.sh, which the TPM tests use to restart a swtpm on its state: it must
/// return only once swtpm has exited, because swtpm removes its pid file before it releases its
/// state directory's lock, and a swtpm started at once on that state finds the lock taken.
@Suite
final class SwtpmStopTests {
    let scratch = ScratchDirectory()

    /// A stand-in named `swtpm` (the script signals and waits only for a process of that name)
    /// that does what a swtpm slow to exit does: on SIGTERM it removes its pid file and keeps
    /// running. The stop returns with it exited (here killed once its 5 s were up), never while
    /// it still runs.
    @Test func stopReturnsOnceSwtpmHasExitedNotWhenItsPidFileIsGone() async throws {
        try await offThePool {
            let state = scratch.sub("state"), bin = scratch.sub("bin")
            for directory in [state, bin] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false) }
            // A link named swtpm to the shell (its process is then named swtpm): no executable
            // is written, which a child forked meanwhile by another test could hold open for
            // writing (exec would fail with "text file busy").
            let standIn = "\(bin)/swtpm"
            try FileManager.default.createSymbolicLink(atPath: standIn, withDestinationPath: "/bin/sh")
            let script = """
                trap 'rm -f "$1/swtpm.pid"' TERM
                echo $$ > "$1/swtpm.pid"
                echo ready
                while :; do sleep 1; done
                """
            let slowToExit = try Subprocess(standIn, ["-c", script, "swtpm", state])
            #expect(slowToExit.readLine() == "ready")

            _ = try SoftwareTPM.script("swtpm-stop.sh", ["--keep", state])

            var status: Int32 = 0
            let exited = waitpid(slowToExit.pid, &status, WNOHANG)
            #expect(exited == slowToExit.pid, "swtpm-stop.sh returned while the swtpm it stopped was still running")
            if exited == 0 {
                kill(slowToExit.pid, SIGKILL)
                slowToExit.wait()
            }
            #expect(FileManager.default.fileExists(atPath: state), "--keep keeps the state")
            #expect(!FileManager.default.fileExists(atPath: "\(state)/swtpm.pid"))
        }
    }
}
