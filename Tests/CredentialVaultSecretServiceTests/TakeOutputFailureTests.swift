import CredentialVault
import CredentialVaultSecretService
import Foundation
import Testing

/// `credvault lookup --take --backend secret-service` whose stdout fails (issue 11, finding 4):
/// the Secret Service has no lock shared with the CLI, so the value is taken first and stored
/// back when it cannot be written: exit 3, and the value is still there.
@Suite(.privateKeyring)
struct TakeOutputFailureTests {
    @Test(arguments: ["/dev/full", "closed"])
    func aValueThatCannotBeWrittenIsStoredBack(output: String) throws {
        let service = "cvtest-take-\(UUID().uuidString.prefix(8))"
        let store = SecretServiceStore()
        defer { _ = try? store.deleteAll(service: service) }
        let key = CredentialKey(service: service, account: "alice", label: "Alice's token")
        try store.save(Data("single use".utf8), for: key, options: .portable)
        let redirect = output == "closed" ? ">&-" : "> \(output)"
        let credvault = SecretServiceCLITests.credvaultPath
        let run = try ChildProcess.run(
            "/bin/sh", ["-c", "exec \"$0\" lookup \"$1\" alice --take --backend secret-service \(redirect)", credvault, service])
        #expect(run.status == 3, "\(run.stderr)")
        #expect(run.stderr.contains("cannot write to stdout"), "\(run.stderr)")
        #expect(try store.load(key) == Data("single use".utf8), "stored back")
        let metadata = try store.metadata(for: key)
        #expect(metadata?.accessibility == .portable && metadata?.key.label == "Alice's token", "with its accessibility and label")
    }
}
