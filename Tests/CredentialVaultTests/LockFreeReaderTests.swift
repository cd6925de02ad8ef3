import Foundation
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// Readers never wait on a writer's lock (issue 11, finding 10): with an expired ephemeral
/// record in the vault, opening it and reading other keys (or the expired one) purge it only if
/// the lock is free at once; while another process holds the lock they answer immediately.
@Suite final class LockFreeReaderTests {
    let dir = TempDirectory()
    let other = CredentialKey(service: "s", account: "other")
    let verifier = CredentialKey(service: "s", account: "verifier")

    /// A process holding the vault's lock (a raw flock), until the test ends.
    private func holdLock(_ url: URL) throws -> HelperProcess {
        let holder = try HelperProcess(["hold-lock", url.path, "60"], environment: [:])
        try holder.waitForLine(startingWith: "locked")
        return holder
    }

    @Test func loadAndListAnswerAtOnceWhileAnotherProcessHoldsTheLock() throws {
        let clock = ManualClock()
        let store = try TestVault.create(dir, clock: clock)
        try store.save(Data("v".utf8), for: other, options: .portable)
        try store.save(Data("pkce".utf8), for: verifier, options: .ephemeral(ttl: .seconds(30)))
        clock.advance(by: .seconds(31))
        let holder = try holdLock(store.url)
        defer { holder.kill() }

        let start = ContinuousClock.now
        let reader = try SealedFileStore.open(
            at: store.url, key: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir, clock: clock))
        let opened = ContinuousClock.now
        #expect(opened - start < .seconds(1), "open does not wait for the lock (took \(opened - start))")
        #expect(try reader.load(other) == Data("v".utf8))
        #expect(try reader.listKeys(service: "s") == [other])
        #expect(throws: CredentialVaultError.expired) { try reader.load(self.verifier) }
        let answered = ContinuousClock.now - opened
        #expect(answered < .milliseconds(100), "load, list and the expired load answered in \(answered)")
        // The purge happens once the lock is free.
        holder.kill()
        _ = try SealedFileStore.open(at: store.url, key: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir, clock: clock))
        #expect(try TestVault.storedRecordCount(store, clock: clock) == 1)
    }

    /// The same through the command line: `credvault lookup` of another key answers while the
    /// lock is held (before: the full 10 s lock wait).
    @Test func theCLILookupAnswersWhileAnotherProcessHoldsTheLock() throws {
        let vault = dir.path("vaults/v.cvault").path
        let keyFile = dir.path("k.key").path
        let environment = ["HOME": dir.url.path, "XDG_DATA_HOME": dir.path("data").path, "XDG_STATE_HOME": dir.path("state").path]
        func credvault(_ arguments: [String], stdin: Data = Data()) throws -> (status: Int32, stdout: Data) {
            let process = Process()
            process.executableURL = BuiltProducts.credvault
            process.arguments = arguments
            process.environment = environment.merging(Sanitizers.options) { $1 }
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            input.fileHandleForWriting.write(stdin)
            try input.fileHandleForWriting.close()
            let out = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, out)
        }
        #expect(try credvault(["keygen", keyFile]).status == 0)
        let unlock = ["--vault", vault, "--key-file", keyFile]
        #expect(try credvault(["store", "s", "other", "--portable"] + unlock, stdin: Data("v".utf8)).status == 0)
        // What a lookup costs without a lock holder (process start, unlock), the slower of two.
        var baseline = Duration.zero
        for _ in 0..<2 {
            let start = ContinuousClock.now
            #expect(try credvault(["lookup", "s", "other"] + unlock).status == 0)
            baseline = max(baseline, ContinuousClock.now - start)
        }
        #expect(try credvault(["store", "s", "verifier", "--ttl", "1"] + unlock, stdin: Data("pkce".utf8)).status == 0)
        Thread.sleep(forTimeInterval: 1.2)
        let holder = try holdLock(URL(fileURLWithPath: vault))
        defer { holder.kill() }
        let start = ContinuousClock.now
        let found = try credvault(["lookup", "s", "other"] + unlock)
        let took = ContinuousClock.now - start
        #expect(found.status == 0 && found.stdout == Data("v".utf8))
        #expect(took < baseline + .milliseconds(100), "credvault lookup answered in \(took) while the lock was held (\(baseline) without)")
    }
}
