import CredentialVaultTesting
import Foundation
import Testing

@testable import CredentialVault

/// The sealed file's async API never blocks the caller's threads (issue 13, part 1): with
/// Swift's cooperative pool at 2 threads (this machine's cores), a heartbeat stays on time while
/// 64 async saves wait for a lock another process holds for 3 s; cancelling them returns within
/// 50 ms with nothing written; a cache hit runs on the caller's thread.
@Suite(.serialized) final class AsyncNonBlockingTests {
    let dir = TempDirectory()

    private func holdLock(_ url: URL, seconds: Int) throws -> HelperProcess {
        let holder = try HelperProcess(["hold-lock", url.path, "\(seconds)"], environment: [:])
        try holder.waitForLine(startingWith: "locked")
        return holder
    }

    private static func key(_ i: Int) -> CredentialKey { CredentialKey(service: "async", account: "save-\(i)") }

    @Test func sixtyFourSavesWaitingForAnotherProcesssLockDoNotBlockThePool() async throws {
        let store = try TestVault.create(dir)
        let holder = try holdLock(store.url, seconds: 3)
        defer { holder.kill() }
        let heartbeat = Heartbeat.start()
        let started = ContinuousClock.now
        let saves = (0..<64).map { i in
            Task { () async throws in try await store.save(Data("v\(i)".utf8), for: Self.key(i), options: .portable) }
        }
        for save in saves { try await save.value }
        let waited = ContinuousClock.now - started
        let lag = await heartbeat.stop()
        #expect(waited >= .seconds(2), "the saves waited for the other process's lock (\(waited))")
        #expect(lag < .milliseconds(20), "the heartbeat's worst lag was \(lag) while 64 saves waited for the lock")
        #expect(heartbeat.count > 100, "the heartbeat kept beating (\(heartbeat.count) beats)")
        let reader = try await SealedFileStore.open(at: store.url, key: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        await #expect(try reader.listKeys(service: "async").count == 64, "every save landed")
    }

    @Test func cancellingSavesThatWaitForTheLockReturnsWithin50msAndWritesNothing() async throws {
        let store = try TestVault.create(dir)
        let holder = try holdLock(store.url, seconds: 30)
        defer { holder.kill() }
        let heartbeat = Heartbeat.start()
        let saves = (0..<64).map { i in
            Task { () async throws in try await store.save(Data("v\(i)".utf8), for: Self.key(i), options: .portable) }
        }
        try await Task.sleep(for: .milliseconds(500))
        let cancelled = ContinuousClock.now
        for save in saves { save.cancel() }
        var outcomes: [String] = []
        for save in saves {
            do {
                try await save.value
                outcomes.append("saved")
            } catch {
                outcomes.append("\(error)")
            }
        }
        let returned = ContinuousClock.now - cancelled
        let lag = await heartbeat.stop()
        #expect(returned < .milliseconds(50), "the 64 cancelled saves returned after \(returned)")
        #expect(outcomes.allSatisfy { $0 == "\(CredentialVaultError.cancelled)" }, "\(Set(outcomes))")
        #expect(lag < .milliseconds(20), "heartbeat lag \(lag)")
        holder.kill()
        await #expect(try store.listKeys(service: "async").isEmpty, "a cancelled save wrote nothing")
    }

    @Test func aWaitForTheLockStillEndsAtTheLockTimeoutWithBusy() async throws {
        let store = try TestVault.create(dir, lockTimeout: .milliseconds(300))
        let holder = try holdLock(store.url, seconds: 30)
        defer { holder.kill() }
        let started = ContinuousClock.now
        await #expect(throws: CredentialVaultError.busy) { try await store.save(Data("v".utf8), for: Self.key(0), options: .portable) }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(300) && waited < .seconds(2), "\(waited)")
    }

    @Test func aCacheHitIsAnsweredOnTheCallersThreadAndAChangedFileOnTheStoresThread() async throws {
        let store = try TestVault.create(dir)
        try await store.save(Data("v".utf8), for: Self.key(1), options: .portable)
        try await store.save(Data("d".utf8), for: Self.key(2), options: .default)
        _ = try await store.load(Self.key(2))  // derives the device key
        let before = store.threads.submittedJobs
        #expect(try await store.load(Self.key(1)) == Data("v".utf8))
        #expect(try await store.load(Self.key(2)) == Data("d".utf8))
        #expect(try await store.load(Self.key(3)) == nil)
        #expect(try await store.listKeys(service: "async").count == 2)
        #expect(try await store.metadata(for: Self.key(1))?.accessibility == .portable)
        #expect(store.threads.submittedJobs == before, "cache hits hopped to the store's thread")

        // Another process (here: another handle) writes: the next load catches up off the caller's thread.
        let other = try await SealedFileStore.open(at: store.url, key: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        try await other.save(Data("w".utf8), for: Self.key(1), options: .portable)
        #expect(try await store.load(Self.key(1)) == Data("w".utf8))
        #expect(store.threads.submittedJobs == before + 1, "the catch-up ran on the store's thread")
    }

    @Test func asyncWritesInsideExclusiveAccessUseTheLockHeld() async throws {
        let store = try TestVault.create(dir, lockTimeout: .milliseconds(500))
        let value = try await store.withExclusiveAccess { () async throws -> Data? in
            try await store.save(Data("inside".utf8), for: Self.key(1), options: .portable)
            try await store.changeKey(from: .passphrase(TestVault.passphrase), to: .passphrase("another passphrase"), kdf: TestVault.kdf)
            return try await store.take(Self.key(1))
        }
        #expect(value == Data("inside".utf8), "no self-deadlock: the writes found the lock held by this task")
        _ = try await SealedFileStore.open(at: store.url, key: .passphrase("another passphrase"), configuration: TestVault.configuration(dir))
    }
}
