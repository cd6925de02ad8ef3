import CredentialVault
import CredentialVaultSecretService
import Foundation
import Testing

/// `credvault lookup --take --backend secret-service` whose stdout fails (issue 11, finding 4):
/// the Secret Service has no lock shared with the CLI, so the value is taken first and stored
/// back when it cannot be written: exit 3, and the value is still there.
@Suite(.privateKeyring)
struct TakeOutputFailureTests {
    /// "closed and no stdin": with descriptors 0 and 1 both closed, the process's own next
    /// descriptors (an eventfd) used to take their numbers, so the secret "was written" to an
    /// eventfd, exit 0, value gone; descriptors 0-2 are now reserved with /dev/null at start.
    @Test(arguments: ["/dev/full", "closed", "closed and no stdin"])
    func aValueThatCannotBeWrittenIsStoredBack(output: String) throws {
        let service = "cvtest-take-\(UUID().uuidString.prefix(8))"
        let store = SecretServiceStore()
        defer { _ = try? store.deleteAll(service: service) }
        let key = CredentialKey(service: service, account: "alice", label: "Alice's token")
        try store.save(Data("single use".utf8), for: key, options: .portable)
        let redirect = output == "closed" ? ">&-" : output == "closed and no stdin" ? "<&- >&-" : "> \(output)"
        let credvault = SecretServiceCLITests.credvaultPath
        let run = try ChildProcess.run(
            "/bin/sh", ["-c", "exec \"$0\" lookup \"$1\" alice --take --backend secret-service \(redirect)", credvault, service])
        #expect(run.status == 3, "\(run.stderr)")
        #expect(run.stderr.contains("cannot write to stdout"), "\(run.stderr)")
        #expect(try store.load(key) == Data("single use".utf8), "stored back")
        let metadata = try store.metadata(for: key)
        #expect(metadata?.accessibility == .portable && metadata?.key.label == "Alice's token", "with its accessibility and label")
    }

    /// A value stored while a take's write was failing is newer: the failed take never puts the
    /// older value back over it. The take's write fails late (a large value into a pipe whose
    /// reader sleeps, then exits), and a store runs in that time.
    @Test func aFailedTakeNeverReplacesANewerValue() throws {
        let service = "cvtest-take-newer-\(UUID().uuidString.prefix(8))"
        let store = SecretServiceStore()
        defer { _ = try? store.deleteAll(service: service) }
        let key = CredentialKey(service: service, account: "alice")
        try store.save(Data(repeating: 0x61, count: 300_000), for: key, options: .portable)
        let credvault = SecretServiceCLITests.credvaultPath
        let script = """
            "$0" lookup "$1" alice --take --backend secret-service | (sleep 2) &
            sleep 1
            printf 'NEWER-VALUE' | "$0" store "$1" alice --backend secret-service --portable
            wait
            """
        let run = try ChildProcess.run("/bin/sh", ["-c", script, credvault, service])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try store.load(key) == Data("NEWER-VALUE".utf8), "the newer value stays: \(run.stderr)")
    }
}
