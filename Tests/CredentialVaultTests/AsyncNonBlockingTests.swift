import CredentialVaultTesting
import Foundation
import Testing
import CredentialVaultTestSupport

@testable import CredentialVault

/// The sealed file's async API never blocks the caller's threads: with Swift's cooperative pool
/// at this machine's width, a heartbeat keeps beating while 64 async saves wait for a lock another
/// process holds; cancelled, they end while the lock is still held, with nothing written; a cache
/// hit runs on the caller's thread. Each property is an outcome (the lock is released only after
/// the heartbeat beat), never a latency: the latencies are `credvault-bench`'s.
@Suite struct AsyncNonBlockingTests {
    let dir = TempDirectory()

    /// A process holding the vault's lock until it is killed (at most `seconds`, so that a
    /// failing run cannot keep it for ever).
    private func holdLock(_ url: URL, seconds: Int = 120) throws -> HelperProcess {
        let holder = try HelperProcess(["hold-lock", url.path, "\(seconds)"], environment: [:])
        try holder.waitForLine(startingWith: "locked")
        return holder
    }

    private static func key(_ i: Int) -> CredentialKey { CredentialKey(service: "async", account: "save-\(i)") }

    /// 64 saves, each arriving at `started` once its task runs, then waiting for the lock.
    private static func startSaves(on store: SealedFileStore, started: Arrivals) -> [Task<Void, Error>] {
        (0..<64).map { i in
            Task {
                started.arrive()
                try await store.save(Data("v\(i)".utf8), for: key(i), options: .portable)
            }
        }
    }

    @Test func sixtyFourSavesWaitingForAnotherProcesssLockDoNotBlockThePool() async throws {
        let store = try TestVault.create(dir)
        let holder = try holdLock(store.url)
        defer { holder.kill() }
        let heartbeat = Heartbeat.start()
        let started = Arrivals()
        let saves = Self.startSaves(on: store, started: started)
        // Had the saves blocked their threads, the pool would run neither the last saves' starts
        // nor the heartbeat until the lock is released, which happens only after both.
        #expect(await started.reached(64), "every save started")
        #expect(await heartbeat.beats(50), "the heartbeat kept beating while 64 saves waited for the lock")
        holder.kill()
        for save in saves { try await save.value }
        await heartbeat.stop()
        let reader = try await SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        await #expect(try reader.listKeys(service: "async").count == 64, "every save landed")
    }

    @Test func cancelledSavesEndWhileTheLockIsStillHeldAndWriteNothing() async throws {
        let store = try TestVault.create(dir)
        let holder = try holdLock(store.url)
        defer { holder.kill() }
        let heartbeat = Heartbeat.start()
        let started = Arrivals()
        let saves = Self.startSaves(on: store, started: started)
        #expect(await started.reached(64), "every save started")
        #expect(await heartbeat.beats(20), "the pool runs while the saves wait")
        for save in saves { save.cancel() }
        // The holder still holds the lock: every save must end on its own cancellation.
        let outcomes = try await withCeiling(.seconds(60), "64 cancelled saves") {
            var outcomes: [String] = []
            for save in saves {
                do {
                    try await save.value
                    outcomes.append("saved")
                } catch { outcomes.append("\(error)") }
            }
            return outcomes
        }
        #expect(holder.process.isRunning, "the lock was still held when the saves ended")
        #expect(outcomes.allSatisfy { $0 == "\(CredentialVaultError.cancelled)" }, "\(Set(outcomes))")
        #expect(await heartbeat.beats(20), "the pool still runs")
        await heartbeat.stop()
        holder.kill()
        await #expect(try store.listKeys(service: "async").isEmpty, "a cancelled save wrote nothing")
    }

    @Test func aWaitForTheLockStillEndsAtTheLockTimeoutWithBusy() async throws {
        let store = try TestVault.create(dir, lockTimeout: .milliseconds(300))
        let holder = try holdLock(store.url)
        defer { holder.kill() }
        try await withCeiling(.seconds(60), "a save waiting for a held lock with a 300 ms timeout") {
            await #expect(throws: CredentialVaultError.busy) { try await store.save(Data("v".utf8), for: Self.key(0), options: .portable) }
        }
        #expect(holder.process.isRunning, "busy came from the timeout, not from the lock's release")
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
        let other = try await SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        try await other.save(Data("w".utf8), for: Self.key(1), options: .portable)
        #expect(try await store.load(Self.key(1)) == Data("w".utf8))
        #expect(store.threads.submittedJobs == before + 1, "the catch-up ran on the store's thread")
    }

    @Test func asyncWritesInsideExclusiveAccessUseTheLockHeld() async throws {
        let store = try TestVault.create(dir, lockTimeout: .milliseconds(500))
        let value = try await store.withExclusiveAccess { () async throws -> Data? in
            try await store.save(Data("inside".utf8), for: Self.key(1), options: .portable)
            try await store.changeSecret(from: .passphrase(TestVault.passphrase), to: .passphrase("another passphrase"), kdf: TestVault.kdf)
            return try await store.take(Self.key(1))
        }
        #expect(value == Data("inside".utf8), "no self-deadlock: the writes found the lock held by this task")
        _ = try await SealedFileStore.open(at: store.url, secret: .passphrase("another passphrase"), configuration: TestVault.configuration(dir))
    }
}
