import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultSecretService
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `credvault lookup --take --backend secret-service` whose stdout fails: the Secret Service has
/// no lock shared with the CLI, so the value is taken first and stored back when it cannot be
/// written: exit 3, and the value is still there (unless a newer one was stored meanwhile).
@Suite(.ownThread, .privateKeyring)
struct TakeOutputFailureTests {
    /// "closed and no stdin": with descriptors 0 and 1 both closed, the process's own next
    /// descriptors (an eventfd) used to take their numbers, so the secret "was written" to an
    /// eventfd, exit 0, value gone; descriptors 0-2 are now reserved with /dev/null at start.
    @Test(arguments: ["/dev/full", "closed", "closed and no stdin"])
    func aValueThatCannotBeWrittenIsStoredBack(output: String) async throws {
        try await offThePool {
            let service = "cvtest-take-\(UUID().uuidString.prefix(8))"
            let store = TestEnvironment.unscopedStore()
            defer { _ = try? store.deleteAll(service: service) }
            let key = CredentialKey(service: service, account: "alice", label: "Alice's token")
            try store.save(Data("single use".utf8), for: key, options: .portable)
            let redirect = output == "closed" ? ">&-" : output == "closed and no stdin" ? "<&- >&-" : "> \(output)"
            let run = try CLIChild.run(
                "/bin/sh", ["-c", "exec \"$0\" lookup \"$1\" alice --take --backend secret-service \(redirect)", TestEnvironment.credvault.path, service],
                inheriting: TestEnvironment.cliEnvironment)
            #expect(run.status == 3, "\(run.stderr)")
            #expect(run.stderr.contains("cannot write to stdout"), "\(run.stderr)")
            #expect(try store.load(key) == Data("single use".utf8), "stored back")
            let metadata = try store.metadata(for: key)
            #expect(metadata?.accessibility == .portable && metadata?.key.label == "Alice's token", "with its accessibility and label")
        }
    }

    /// A value stored while a take's write was failing is newer: the failed take never puts the
    /// older value back over it. The take writes a large value into a pipe this test does not
    /// drain: its first byte says the value was taken (the take writes after taking), the full
    /// pipe keeps the write waiting; a store runs then, and only after it is the pipe's reader
    /// closed, which fails the write.
    @Test func aFailedTakeNeverReplacesANewerValue() async throws {
        try await offThePool {
            let service = "cvtest-take-newer-\(UUID().uuidString.prefix(8))"
            let store = TestEnvironment.unscopedStore()
            defer { _ = try? store.deleteAll(service: service) }
            let key = CredentialKey(service: service, account: "alice")
            try store.save(Data(repeating: 0x61, count: 300_000), for: key, options: .portable)

            let take = Process()
            take.executableURL = TestEnvironment.credvault
            take.arguments = ["lookup", service, "alice", "--take", "--backend", "secret-service"]
            take.environment = ProcessInfo.processInfo.environment.merging(TestEnvironment.cliEnvironment.compactMapValues { $0 }) { $1 }
            let output = Pipe()
            let errors = Pipe()
            take.standardOutput = output
            take.standardError = errors
            try take.run()
            let ceiling = DispatchWorkItem { [pid = take.processIdentifier] in kill(pid, SIGKILL) }
            DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: ceiling)
            defer {
                ceiling.cancel()
                if take.isRunning { kill(take.processIdentifier, SIGKILL) }
                take.waitUntilExit()
            }
            var first: UInt8 = 0
            try #require(read(output.fileHandleForReading.fileDescriptor, &first, 1) == 1, "the take wrote the value it took")

            let newer = try CLIChild.run(
                TestEnvironment.credvault.path, ["store", service, "alice", "--backend", "secret-service", "--portable"],
                stdin: Data("NEWER-VALUE".utf8), inheriting: TestEnvironment.cliEnvironment)
            #expect(newer.status == 0, "\(newer.stderr)")
            #expect(take.isRunning, "the take was still writing when the newer value was stored")
            try output.fileHandleForReading.close()
            take.waitUntilExit()
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(take.terminationStatus == 3 && stderr.contains("cannot write to stdout"), "\(stderr)")
            #expect(try store.load(key) == Data("NEWER-VALUE".utf8), "the newer value stays: \(stderr)")
        }
    }
}
