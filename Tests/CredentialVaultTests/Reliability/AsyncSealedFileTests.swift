import CredentialVaultTesting
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredentialVault

/// The sealed file's async API at its edges: a finished job keeps nothing it captured (a saved
/// value), a `Task {}` started inside `withExclusiveAccess` does not inherit the lock after it,
/// a key change neither holds the lock through its derivations nor ignores cancellation, an
/// expired load inside exclusive access purges, concurrent opens share bounded threads, and
/// hundreds of in-process writers all land. Orderings are latches: a writer provably waiting
/// for the lock (`VaultLock.observeRefusedAttempts`), a derivation held at
/// `beforePassphraseDerivation`.
@Suite(.ownThread) final class AsyncSealedFileTests {
    let dir = TempDirectory()
    let key = CredentialKey(service: "probe", account: "a")

    final class Canary: Sendable {}

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
        // The job's closure is released before the waiting task resumes.
        #expect(weakCanary == nil, "the finished job still references what its closure captured")
    }

    @Test(.enabled(if: !Sanitizers.active)) func anAsyncSaveKeepsNoPlaintext() async throws {
        let store = try TestVault.create(dir)
        let secret = MaskedSecret()
        var value = secret.data()
        try await store.save(value, for: key, options: .portable)
        wipe(&value)
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
        let report = MemoryScanner.scan(for: secret)
        #expect(report.hits.isEmpty, "sync save: plaintext still in memory: \(report)")
    }

    /// Arrives at the returned latch each time a writer finds the lock of `store`'s vault held.
    private func refusedAttempts(_ store: SealedFileStore) -> Arrivals {
        let refused = Arrivals()
        VaultLock.observeRefusedAttempts(at: store.url.path) { refused.arrive() }
        return refused
    }

    /// A `Task` started inside `withExclusiveAccess` runs its save after the body returned, while
    /// another handle holds the lock: the save waits for that holder (it must not inherit the
    /// released lock), and lands once the holder is done.
    @Test func aTaskStartedInsideExclusiveAccessDoesNotWriteWithoutTheLockAfterIt() async throws {
        let store = try TestVault.create(dir)
        defer { VaultLock.stopObservingRefusedAttempts(at: store.url.path) }
        let other = try await SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        let key = self.key
        let go = Arrivals()
        let saved = Arrivals()
        let spawned = try await store.withExclusiveAccess { () async throws -> Task<Void, any Error> in
            Task {
                _ = await go.reached(1)
                try await store.save(Data("late".utf8), for: key, options: .portable)
                saved.arrive()
            }
        }
        let refused = refusedAttempts(store)
        let waitedWhileHeld = try await other.withExclusiveAccess { () async throws -> Bool in
            go.arrive()
            let waiting = await refused.reached(1)
            return waiting && saved.count == 0
        }
        #expect(waitedWhileHeld, "the spawned save waited for the other holder's lock")
        try await spawned.value
        #expect(try await other.load(key) == Data("late".utf8))
    }

    /// The consequence had the lock leaked: the writes of a stray task and of the real holder
    /// would interleave without a lock. None is lost, nothing is corrupted.
    @Test func aLockInheritedByAStrayTaskLosesNoWriteAndCorruptsNothing() async throws {
        let store = try TestVault.create(dir)
        let other = try await SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        let go = Arrivals()
        let spawned = try await store.withExclusiveAccess { () async throws -> Task<Void, any Error> in
            Task { () async throws in
                _ = await go.reached(1)
                for i in 0..<60 { try await store.save(Data("l".utf8), for: CredentialKey(service: "race", account: "leaked-\(i)"), options: .portable) }
            }
        }
        var otherError: (any Error)?
        do {
            _ = try await other.withExclusiveAccess { () async throws -> Bool in
                go.arrive()
                for i in 0..<60 { try await other.save(Data("h".utf8), for: CredentialKey(service: "race", account: "holder-\(i)"), options: .portable) }
                return true
            }
        } catch { otherError = error }
        var spawnedError: (any Error)?
        do { try await spawned.value } catch { spawnedError = error }
        var count = -1
        do {
            let fresh = try await SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
            count = try await fresh.listKeys(service: "race").count
        } catch { Issue.record("a fresh open of the vault afterwards: \(error)") }
        #expect(otherError == nil && spawnedError == nil && count == 120,
            "holder error: \(String(describing: otherError)), leaked-lock writer error: \(String(describing: spawnedError)), keys on disk: \(count) of 120")
    }

    /// A configuration whose passphrase derivations, while `hold` is set, arrive at `entered`
    /// and wait for `release` (one signal each).
    final class HeldDerivations: Sendable {
        let hold = Atomic(false)
        let entered = Arrivals()
        let release = DispatchSemaphore(value: 0)

        func configuration(_ dir: TempDirectory) -> SealedFileConfiguration {
            var configuration = TestVault.configuration(dir)
            configuration.beforePassphraseDerivation = { [self] in
                guard hold.load(ordering: .acquiring) else { return }
                entered.arrive()
                release.wait()
            }
            return configuration
        }

        /// Stops holding and lets `count` held derivations go on.
        func releaseAll(_ count: Int) {
            hold.store(false, ordering: .releasing)
            for _ in 0..<count { release.signal() }
        }
    }

    /// While a key change (sync or async) derives its keys, another handle's write with a short
    /// lock timeout is saved: the lock is not held through the derivations.
    @Test(arguments: [false, true]) func aKeyChangeDoesNotHoldTheLockThroughItsDerivations(async: Bool) async throws {
        let derivations = HeldDerivations()
        let store = try await SealedFileStore.create(
            at: dir.path("v\(async)/held.cvault"), secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf,
            configuration: derivations.configuration(dir))
        let other = try await SealedFileStore.open(
            at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir, lockTimeout: .milliseconds(100)))
        derivations.hold.store(true, ordering: .releasing)
        let change = Task.detached { () async throws in
            if async {
                try await store.changeSecret(from: .passphrase(TestVault.passphrase), to: .passphrase("new one"), kdf: TestVault.kdf)
            } else {
                try store.changeSecretSync(from: .passphrase(TestVault.passphrase), to: .passphrase("new one"), kdf: TestVault.kdf)
            }
        }
        #expect(await derivations.entered.reached(1), "the key change is deriving")
        var outcome = "saved"
        do { try other.synchronous.save(Data("x".utf8), for: key, options: .portable) } catch { outcome = "\(error)" }
        derivations.releaseAll(4)
        try await change.value
        #expect(outcome == "saved", "async=\(async): another handle's write during a held derivation: \(outcome)")
    }

    /// The waiter of FaultInjectingStore's in-process exclusive access ends on cancellation,
    /// while the holder still holds it.
    @Test func aCancelledWaiterOfTheFaultStoresExclusiveAccessReturnsWhileItIsHeld() async throws {
        let store = FaultInjectingStore()
        let holds = Arrivals(), release = Arrivals()
        let holding = Task {
            try await store.withExclusiveAccess { () async throws -> Int in
                holds.arrive()
                _ = await release.reached(1)
                return 1
            }
        }
        #expect(await holds.reached(1))
        let waiter = Task { try await store.withExclusiveAccess { () async throws -> Int in 2 } }
        waiter.cancel()
        let ended = try await withCeiling(.seconds(60), "a cancelled waiter") { (try? await waiter.value) != 2 }
        #expect(ended, "the cancelled waiter did not run its body")
        #expect(release.count == 0, "it ended while the holder held")
        release.arrive()
        _ = try await holding.value
    }

    /// Cancelling a key change while its derivation runs ends it with `cancelled` while the
    /// derivation is still held, and changes nothing.
    @Test func cancellingAKeyChangeDuringItsDerivationsEndsItAndChangesNothing() async throws {
        let derivations = HeldDerivations()
        let store = try await SealedFileStore.create(
            at: dir.path("v6/held.cvault"), secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf,
            configuration: derivations.configuration(dir))
        derivations.hold.store(true, ordering: .releasing)
        let change = Task { try await store.changeSecret(from: .passphrase(TestVault.passphrase), to: .passphrase("new"), kdf: TestVault.kdf) }
        #expect(await derivations.entered.reached(1), "the key change is deriving")
        change.cancel()
        let outcome = try await withCeiling(.seconds(60), "a cancelled key change") { () -> String in
            do {
                try await change.value
                return "changed"
            } catch { return "\(error)" }
        }
        #expect(outcome == "\(CredentialVaultError.cancelled)")
        derivations.releaseAll(4)
        _ = try await SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
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

    /// Concurrent async opens derive on bounded, named threads: with every derivation held,
    /// no more than the machine's cores are ever in a derivation at once.
    @Test func concurrentAsyncOpensShareBoundedNamedThreads() async throws {
        let derivations = HeldDerivations()
        let store = try await SealedFileStore.create(
            at: dir.path("v8/held.cvault"), secret: .passphrase(TestVault.passphrase), kdf: TestVault.kdf,
            configuration: derivations.configuration(dir))
        let url = store.url
        let inside = Mutex((now: 0, peak: 0))
        var configuration = derivations.configuration(dir)
        let held = configuration.beforePassphraseDerivation
        configuration.beforePassphraseDerivation = {
            inside.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
            held()
            inside.withLock { $0.now -= 1 }
        }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let counted = configuration
        derivations.hold.store(true, ordering: .releasing)
        let opens = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask { _ = try await SealedFileStore.open(at: url, secret: .passphrase(TestVault.passphrase), configuration: counted) }
                }
                try await group.waitForAll()
            }
        }
        #expect(await derivations.entered.reached(min(8, cores)), "the opens are deriving")
        #expect(threadCount(named: "credvault-kdf") >= 1, "the derivations run on named threads")
        #expect(threadCount(named: "credvault-kdf") <= cores)
        derivations.releaseAll(8)
        try await opens.value
        #expect(inside.withLock { $0.peak } <= cores, "at most \(cores) derivations at once, saw \(inside.withLock { $0.peak })")
    }

    /// Many in-process async writers contend for the vault lock by polling: all land.
    @Test func threeHundredInProcessAsyncSavesAllLand() async throws {
        let store = try TestVault.create(dir)
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
        let failed = outcomes.filter { $0 != "saved" }
        #expect(failed.isEmpty, "\(failed.count) of 300 in-process async saves failed (\(Set(failed)))")
    }
}

extension SealedFileStore {
    /// The synchronous changeSecret, callable from a context where the async overload wins.
    func changeSecretSync(from current: VaultSecret, to new: VaultSecret, kdf: KDFParameters) throws(CredentialVaultError) {
        try changeSecret(from: current, to: new, kdf: kdf)
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
