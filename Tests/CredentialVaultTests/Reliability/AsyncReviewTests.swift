import CredentialVaultTesting
import Foundation
import Synchronization
import Testing

@testable import CredentialVault

/// The async layer's review (issue 13): each test states a promise the first version broke —
/// jobs kept after they ran (a saved value with them), a lock inherited by a `Task {}` started
/// inside `withExclusiveAccess` and used after its release (a corrupted vault), the async key
/// change holding the lock through its derivations and ignoring cancellation, a purge given up
/// inside exclusive access, one thread and one Argon2id per concurrent open.
@Suite(.serialized) final class AsyncReviewTests {
    let dir = TempDirectory()
    let key = CredentialKey(service: "probe", account: "a")
    let slow = try! KDFParameters(opsLimit: 2, memLimitBytes: 128 << 20)

    final class Canary: Sendable {}

    /// a finished job (and everything its closure captured: a saved value) stays referenced
    /// by StoreThreads' queue after run returned.
    @Test func aFinishedJobIsNotRetained() async throws {
        let threads = StoreThreads(name: "probe")
        weak var weakCanary: Canary?
        do {
            let canary = Canary()
            weakCanary = canary
            _ = try await threads.run { _ throws(CredentialVaultError) -> Int in
                _ = canary
                return 1
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(weakCanary == nil, "the finished job still references what its closure captured")
    }

    /// the async save of a value leaves a plaintext copy (held by the store thread's queue).
    @Test(.enabled(if: !Sanitizers.active)) func anAsyncSaveKeepsNoPlaintext() async throws {
        let store = try TestVault.create(dir)
        let secret = MaskedSecret()
        var value = secret.data()
        try await store.save(value, for: key, options: .portable)
        wipe(&value)
        try await Task.sleep(for: .milliseconds(100))
        let report = MemoryScanner.scan(for: secret)
        #expect(report.bytesScanned > 1 << 20)
        #expect(report.hits.isEmpty, "async save: plaintext still in memory: \(report)")
    }

    @Test(.enabled(if: !Sanitizers.active)) func aSyncSaveKeepsNoPlaintext() async throws {
        let store = try TestVault.create(dir)
        let secret = MaskedSecret()
        var value = secret.data()
        try store.synchronous.save(value, for: key, options: .portable)
        wipe(&value)
        try await Task.sleep(for: .milliseconds(100))
        let report = MemoryScanner.scan(for: secret)
        #expect(report.hits.isEmpty, "sync save: plaintext still in memory: \(report)")
    }

    /// a Task spawned inside withExclusiveAccess inherits the task-local lock and, after the
    /// body returned (lock released), writes without any lock while another holder has it.
    @Test func aTaskStartedInsideExclusiveAccessDoesNotWriteWithoutTheLockAfterIt() async throws {
        let store = try TestVault.create(dir, lockTimeout: .seconds(5))
        let other = try await SealedFileStore.open(
            at: store.url, key: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir, lockTimeout: .seconds(5)))
        let key = self.key
        let spawned = try await store.withExclusiveAccess { () async throws -> Task<Duration, any Error> in
            Task { () async throws -> Duration in
                try await Task.sleep(for: .milliseconds(300))
                let start = ContinuousClock.now
                try await store.save(Data("late".utf8), for: key, options: .portable)
                return ContinuousClock.now - start
            }
        }
        _ = try await other.withExclusiveAccess { () async throws -> Bool in
            try await Task.sleep(for: .milliseconds(1200))
            return true
        }
        let took = try await spawned.value
        #expect(took >= .milliseconds(500), "the spawned save did not wait for the other holder's lock (took \(took))")
    }

    /// the consequence of P2: writes of the leaked lock and of the real holder interleave.
    @Test func aLockInheritedByAStrayTaskLosesNoWriteAndCorruptsNothing() async throws {
        let store = try TestVault.create(dir, lockTimeout: .seconds(5))
        let other = try await SealedFileStore.open(
            at: store.url, key: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir, lockTimeout: .seconds(5)))
        let spawned = try await store.withExclusiveAccess { () async throws -> Task<Void, any Error> in
            Task { () async throws in
                try await Task.sleep(for: .milliseconds(200))
                for i in 0..<60 { try await store.save(Data("l".utf8), for: CredentialKey(service: "race", account: "leaked-\(i)"), options: .portable) }
            }
        }
        var otherError: (any Error)?
        do {
            _ = try await other.withExclusiveAccess { () async throws -> Bool in
                try await Task.sleep(for: .milliseconds(190))
                for i in 0..<60 { try await other.save(Data("h".utf8), for: CredentialKey(service: "race", account: "holder-\(i)"), options: .portable) }
                return true
            }
        } catch { otherError = error }
        var spawnedError: (any Error)?
        do { try await spawned.value } catch { spawnedError = error }
        var count = -1
        do {
            let fresh = try await SealedFileStore.open(at: store.url, key: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
            count = try await fresh.listKeys(service: "race").count
        } catch { Issue.record("a fresh open of the vault afterwards: \(error)") }
        #expect(otherError == nil && spawnedError == nil && count == 120,
            "holder error: \(String(describing: otherError)), leaked-lock writer error: \(String(describing: spawnedError)), keys on disk: \(count) of 120")
    }

    /// the async key change holds the vault lock through its Argon2id derivations (the sync
    /// one does not): another handle's write with a short lock timeout gets `busy`.
    @Test(arguments: [false, true]) func aKeyChangeDoesNotHoldTheLockThroughItsDerivations(async: Bool) async throws {
        let store = try await SealedFileStore.create(
            at: dir.path("v\(async)/slow.cvault"), key: .passphrase(TestVault.passphrase), kdf: slow,
            configuration: TestVault.configuration(dir))
        let other = try await SealedFileStore.open(
            at: store.url, key: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir, lockTimeout: .milliseconds(100)))
        let started = ContinuousClock.now
        let change = Task.detached { [slow] () async throws in
            if async {
                try await store.changeKey(from: .passphrase(TestVault.passphrase), to: .passphrase("new one"), kdf: slow)
            } else {
                try store.changeKeySync(
                    from: .passphrase(TestVault.passphrase), to: .passphrase("new one"), kdf: slow)
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        var outcome = "saved"
        do { try other.synchronous.save(Data("x".utf8), for: key, options: .portable) } catch { outcome = "\(error)" }
        try await change.value
        let took = ContinuousClock.now - started
        #expect(outcome == "saved", "async=\(async): another handle's write during a \(took) key change: \(outcome)")
    }

    /// FaultInjectingStore's in-process exclusive access: a cancelled waiter waits for the
    /// holder anyway (no cancellation, no timeout).
    @Test func aCancelledWaiterOfTheFaultStoresExclusiveAccessReturnsPromptly() async throws {
        let store = FaultInjectingStore()
        let holding = Task {
            try await store.withExclusiveAccess { () async throws -> Int in
                try? await Task.sleep(for: .milliseconds(1500))
                return 1
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        let waiter = Task { try await store.withExclusiveAccess { () async throws -> Int in 2 } }
        try await Task.sleep(for: .milliseconds(100))
        let cancelled = ContinuousClock.now
        waiter.cancel()
        _ = try? await waiter.value
        let returned = ContinuousClock.now - cancelled
        _ = try await holding.value
        #expect(returned < .milliseconds(100), "a cancelled waiter returned after \(returned)")
    }

    /// cancellation during an async key change's derivations is not prompt.
    @Test func cancellingAKeyChangeDuringItsDerivationsIsPromptAndChangesNothing() async throws {
        let store = try await SealedFileStore.create(
            at: dir.path("v6/slow.cvault"), key: .passphrase(TestVault.passphrase), kdf: slow, configuration: TestVault.configuration(dir))
        let slow = self.slow
        let change = Task { try await store.changeKey(from: .passphrase(TestVault.passphrase), to: .passphrase("new"), kdf: slow) }
        try await Task.sleep(for: .milliseconds(50))
        let cancelled = ContinuousClock.now
        change.cancel()
        var outcome = "changed"
        do { try await change.value } catch { outcome = "\(error)" }
        let returned = ContinuousClock.now - cancelled
        #expect(returned < .milliseconds(50), "cancelled key change returned after \(returned) with \(outcome)")
        #expect(outcome == "\(CredentialVaultError.cancelled)")
        try await Task.sleep(for: .seconds(1))  // the abandoned derivation has ended meanwhile
        _ = try await SealedFileStore.open(at: store.url, key: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
    }

    /// An async load of an expired record inside withExclusiveAccess purges it, like the sync one.
    @Test func anExpiredAsyncLoadInsideExclusiveAccessPurges() async throws {
        let clock = ManualClock()
        let store = try TestVault.create(dir, clock: clock)
        try await store.save(Data("v".utf8), for: key, options: .ephemeral(ttl: .seconds(5)))
        clock.advance(by: .seconds(10))
        let key = self.key
        _ = try await store.withExclusiveAccess { () async throws -> Bool in
            await #expect(throws: CredentialVaultError.expired) { try await store.load(key) }
            return true
        }
        let raw = try store.read { $0.contents.records[key] }
        #expect(raw == nil, "the expired record was not purged by the async load inside exclusive access")
    }

    /// concurrent async opens each get a thread of their own (and an Argon2id of the vault's
    /// memory cost): no bound, where the sync API on the pool was bounded by its width.
    @Test func concurrentAsyncOpensShareBoundedNamedThreads() async throws {
        let store = try await SealedFileStore.create(
            at: dir.path("v8/slow.cvault"), key: .passphrase(TestVault.passphrase), kdf: slow, configuration: TestVault.configuration(dir))
        let url = store.url
        let configuration = TestVault.configuration(dir)
        let peak = Peak()
        let peakAll = Peak()
        let sampler = Task.detached {
            while !Task.isCancelled {
                let n = threadCount(named: "credvault-kdf")
                let all = threadCount(named: "")
                peakAll.value.withLock { $0 = max($0, all) }
                peak.value.withLock { $0 = max($0, n) }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { _ = try await SealedFileStore.open(at: url, key: .passphrase(TestVault.passphrase), configuration: configuration) }
            }
            try await group.waitForAll()
        }
        sampler.cancel()
        #expect(peak.value.withLock { $0 } >= 1, "the opens ran on the key-derivation threads, which are named")
        #expect(peak.value.withLock { $0 } <= ProcessInfo.processInfo.activeProcessorCount,
            "peak of \(peak.value.withLock { $0 }) concurrent open threads, each deriving 128 MiB Argon2id")
    }

    /// many in-process async writers contend for the vault lock by polling: do they all land
    /// within the lock timeout?
    @Test func threeHundredInProcessAsyncSavesAllLand() async throws {
        let store = try TestVault.create(dir, lockTimeout: .seconds(30))  // 300 durable writes in turn: seconds on a slow disk
        let started = ContinuousClock.now
        let outcomes = await withTaskGroup(of: String.self) { group in
            for i in 0..<300 {
                group.addTask {
                    do {
                        try await store.save(Data("v".utf8), for: CredentialKey(service: "many", account: "\(i)"), options: .portable)
                        return "saved"
                    } catch { return "\(error)" }
                }
            }
            var all: [String] = []
            for await o in group { all.append(o) }
            return all
        }
        let took = ContinuousClock.now - started
        let failed = outcomes.filter { $0 != "saved" }
        #expect(failed.isEmpty, "\(failed.count) of 300 in-process async saves failed (\(Set(failed))) in \(took)")
    }
}

extension SealedFileStore {
    /// The synchronous changeKey, callable from a context where the async overload wins.
    func changeKeySync(from current: VaultKey, to new: VaultKey, kdf: KDFParameters) throws(CredentialVaultError) {
        try changeKey(from: current, to: new, kdf: kdf)
    }
}

final class Peak: Sendable { let value = Mutex(0) }

/// Threads of this process whose kernel name starts with `prefix`.
func threadCount(named prefix: String) -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter { t in
        ((try? String(contentsOfFile: "/proc/self/task/\(t)/comm", encoding: .utf8)) ?? "").hasPrefix(prefix)
    }.count
}
