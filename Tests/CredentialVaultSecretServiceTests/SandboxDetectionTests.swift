import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultSecretService

/// What sandbox detection makes of what it reads: the environment, `/.flatpak-info` and the
/// process's cgroups are inputs, and none of them may make an unsandboxed process ask the
/// Secret portal (which gives every unsandboxed caller the same secret), hang, or put what a
/// file says into messages.
@Suite(.ownThread)
struct SandboxDetectionTests {
    static let missing = "/nonexistent/flatpak-info"

    /// This test process runs in no snap's cgroup: `SNAP_NAME` alone (inherited from a snap's
    /// terminal, or set by anyone) must not make it a sandbox, or the portal would be asked
    /// for the secret xdg-desktop-portal gives every host program (app id "").
    @Test func snapNameWithoutASnapCgroupIsNotASandbox() throws {
        #expect(Sandbox.detect(environment: ["SNAP_NAME": "example"], flatpakInfo: Self.missing) == nil)
        let resolver = BackendResolver(application: try ApplicationIdentifier("org.example.App"), environment: ["SNAP_NAME": "example"])
        #expect(resolver.sandbox == nil)
        #expect(resolver.portal.sandbox == nil)
    }

    /// A FIFO at the info file's path (whoever made the root file system) is not opened for a
    /// read that waits for a writer: detection returns (no app id from it).
    @Test func anInfoFileThatIsAFIFODoesNotHangDetection() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sandbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("flatpak-info").path
        try #require(mkfifo(fifo, 0o600) == 0)
        let done = DispatchSemaphore(value: 0)
        let found = Mutex<Sandbox?>(nil)
        Thread {
            found.withLock { $0 = Sandbox.detect(environment: [:], flatpakInfo: fifo) }
            done.signal()
        }.start()
        let returned = done.wait(timeout: .now() + .seconds(Int(TestEnvironment.timeout.components.seconds))) == .success
        if !returned {
            // Release the stuck open (a writer appears) so that the test process can go on.
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            _ = done.wait(timeout: .now() + 5)
        }
        #expect(returned, "Sandbox.detect waited for a writer of the FIFO")
        #expect(found.withLock { $0 } == Sandbox(kind: .flatpak, applicationID: nil))
    }

    /// What the info file names is an app id only when it is one (the portal's rule): control
    /// characters, spaces or a 64 KiB line never reach a message or a log.
    @Test func anInfoFileNameThatIsNotAnAppIDIsNotTaken() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sandbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let info = directory.appendingPathComponent("flatpak-info")
        for name in ["org.example.App\u{1b}[2J", "org.example App", "single", "1org.example.App", String(repeating: "a.", count: 200) + "b"] {
            try Data("[Application]\nname=\(name)\n".utf8).write(to: info)
            #expect(Sandbox.detect(environment: [:], flatpakInfo: info.path) == Sandbox(kind: .flatpak, applicationID: nil), "\(name.debugDescription)")
        }
        try Data("[Application]\nname=org.example.App_2-x\n".utf8).write(to: info)
        #expect(Sandbox.detect(environment: [:], flatpakInfo: info.path)?.applicationID == "org.example.App_2-x")
    }
}
