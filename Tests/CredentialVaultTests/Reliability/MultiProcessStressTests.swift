import CredentialVaultTestPlans
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// Many processes writing one vault: nothing lost, nothing resurrected, no stale lock.
/// Size: CREDVAULT_STRESS_PROCESSES x CREDVAULT_STRESS_OPS (default 8 x 250;
/// `scripts/reliability/stress.sh` runs more and longer).
@Suite(.ownThread) final class MultiProcessStressTests {
    let dir = TempDirectory()
    let processes = ReliabilitySettings.integer("CREDVAULT_STRESS_PROCESSES", default: 8)
    let operations = ReliabilitySettings.integer("CREDVAULT_STRESS_OPS", default: 250)

    /// Starts the stress writers; each runs its own `StressPlan`.
    private func startWriters(_ url: URL, keyFile: URL) throws -> [(StressPlan, HelperProcess)] {
        try (0..<processes).map { n in
            let plan = StressPlan(prefix: "p\(n)", count: operations)
            let helper = try HelperProcess(
                ["stress", url.path, keyFile.path, plan.prefix, "\(plan.count)"], environment: HelperProcess.environment(dir))
            return (plan, helper)
        }
    }

    /// Every writer finished, and the vault holds exactly the union of their final states and
    /// a counter that saw every increment.
    private func checkFinalState(_ writers: [(StressPlan, HelperProcess)], url: URL, keyFile: URL) throws {
        for (plan, helper) in writers {
            #expect(helper.waitForExit() == 0, "\(plan.prefix): \(helper.stderrText())")
        }
        let store = try SealedFileStore.open(at: url, secret: .keyFile(keyFile), configuration: TestVault.configuration(dir))
        var expected: [CredentialKey: Data] = [:]
        for (plan, _) in writers { expected.merge(plan.finalState) { $1 } }
        let actual = try VaultDirectory.contents(of: store).filter { $0.key.service == StressPlan.service }
        #expect(actual.count == expected.count)
        #expect(actual == expected, "the final state is exactly the replayed plans")
        let counter = try store.load(StressPlan.counter).map { String(decoding: $0, as: UTF8.self) }
        #expect(counter == "\(writers.count * writers[0].0.increments)", "no lost read-modify-write")
        #expect(VaultDirectory.tempFiles(of: url).isEmpty)
    }

    @Test func writersSavingAndDeletingEndInExactlyTheExpectedState() throws {
        let keyFile = try TestVault.keyFile(dir)
        let url = try TestVault.create(dir, secret: .keyFile(keyFile)).url
        let start = ContinuousClock.now
        try checkFinalState(try startWriters(url, keyFile: keyFile), url: url, keyFile: keyFile)
        print("stress: \(processes) processes x \(operations) operations in \(ContinuousClock.now - start)")
    }

    @Test func aSigkilledLockHolderLeavesNoStaleLock() throws {
        let keyFile = try TestVault.keyFile(dir)
        let url = try TestVault.create(dir, secret: .keyFile(keyFile)).url
        // A holder inside withExclusiveAccess, having written once, then killed: the writers
        // queued behind it proceed, and its acknowledged write stays.
        let holder = try HelperProcess(["hold-exclusive", url.path, keyFile.path], environment: HelperProcess.environment(dir))
        try holder.waitForLine(startingWith: "holding")
        let store = try SealedFileStore.open(
            at: url, secret: .keyFile(keyFile), configuration: TestVault.configuration(dir, lockTimeout: .milliseconds(200)))
        #expect(throws: CredentialVaultError.busy) {
            try store.save(Data("x".utf8), for: CredentialKey(service: "s", account: "blocked"), options: .portable)
        }
        let writers = try startWriters(url, keyFile: keyFile)
        holder.kill()
        try checkFinalState(writers, url: url, keyFile: keyFile)
        #expect(try store.load(CredentialKey(service: "holder", account: "inside")) == Data("held".utf8))
        // The lock file stays (flock locks live in the kernel, not in the file) and is free.
        #expect(FileManager.default.fileExists(atPath: url.path + ".lock"))
        try store.save(Data("x".utf8), for: CredentialKey(service: "s", account: "after"), options: .portable)
    }
}
