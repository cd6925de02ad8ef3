import CredentialVault
import CredentialVaultTesting
import Foundation
import CredentialVaultTestSupport
import Synchronization
import Testing

/// A third-party backend that implements only the blocking operations, each of which blocks its
/// thread (as file or network I/O does), and declares `AsyncTokenStorageAdapter` with no operation of
/// its own: the library's default async operations pass the conformance suite through the
/// async API, and saves blocked in the backend leave the cooperative pool free.
@Suite(.ownThread) struct BlockingBackendDefaultsTests {
    /// Every operation forwarded to an in-memory store after blocking the thread for `pause`
    /// microseconds (the I/O a real backend waits for; not an ordering).
    struct BlockingOnlyStore: TokenStorageAdapter {
        let inner: InMemoryStore
        let pause: UInt32
        var capabilities: BackendCapabilities { inner.capabilities }

        private func blocking<T>(_ body: () throws(CredentialVaultError) -> T) throws(CredentialVaultError) -> T {
            usleep(pause)
            return try body()
        }

        func save(_ value: Data, for key: CredentialKey, options: StorageOptions) throws(CredentialVaultError) {
            try blocking { () throws(CredentialVaultError) in try inner.synchronous.save(value, for: key, options: options) }
        }
        func load(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
            try blocking { () throws(CredentialVaultError) in try inner.synchronous.load(key) }
        }
        func take(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
            try blocking { () throws(CredentialVaultError) in try inner.synchronous.take(key) }
        }
        func delete(_ key: CredentialKey) throws(CredentialVaultError) -> Bool {
            try blocking { () throws(CredentialVaultError) in try inner.synchronous.delete(key) }
        }
        func listKeys(service: String?) throws(CredentialVaultError) -> [CredentialKey] {
            try blocking { () throws(CredentialVaultError) in try inner.synchronous.listKeys(service: service) }
        }
        func metadata(for key: CredentialKey) throws(CredentialVaultError) -> CredentialMetadata? {
            try blocking { () throws(CredentialVaultError) in try inner.synchronous.metadata(for: key) }
        }
        func deleteAll(service: String?) throws(CredentialVaultError) -> Int {
            try blocking { () throws(CredentialVaultError) in try inner.synchronous.deleteAll(service: service) }
        }
    }

    static let backend = ConformanceBackend(
        name: "blocking operations only", makeStore: { clock in StoreUnderTest(BlockingOnlyStore(inner: InMemoryStore(clock: clock), pause: 1_000)) },
        reopen: nil)

    /// The whole suite through the async API; its pool check is made by what happens instead
    /// (below), not by a heartbeat gap, which a loaded machine can stretch.
    @Test(arguments: ConformanceCheck.allCases.filter { $0 != .asyncDoesNotBlockThePool })
    func theDefaultAsyncOperationsConform(check: ConformanceCheck) async throws {
        try await ConformanceSuite.run(check, on: Self.backend, through: .async)
    }

    /// Saves stuck in the backend (each blocked on a gate the test holds) leave the cooperative
    /// pool free: the heartbeat keeps beating while every library thread is blocked, and the
    /// test, on the pool, opens the gate: every save is let go by it, none by the gate's own
    /// ceiling. Run on the pool's threads instead (as the defaults would be if they called the
    /// blocking operation directly), the blocked saves would take the whole pool: nothing could
    /// open the gate until its ceiling let the saves go, which the store counts.
    @Test func savesBlockedInTheBackendLeaveThePoolFree() async throws {
        let gate = DispatchSemaphore(value: 0)
        let blocked = Arrivals()
        let store = GatedStore(inner: InMemoryStore(), gate: gate, blocked: blocked)
        let heartbeat = Heartbeat.start()
        let saves = (0..<16).map { i in
            Task { try await store.save(Data([UInt8(i)]), for: CredentialKey(service: "gate", account: "\(i)"), options: .portable) }
        }
        #expect(await blocked.reached(4), "the library's threads took the blocked saves")
        #expect(await heartbeat.beats(50), "the pool kept running while the saves were blocked")
        for _ in 0..<16 { gate.signal() }
        for save in saves { try await save.value }
        await heartbeat.stop()
        #expect(try await store.inner.listKeys(service: "gate").count == 16)
        #expect(store.ceilingsReached.load(ordering: .relaxed) == 0, "every save waited for the test, not for the gate's ceiling")
    }

    /// A store whose saves wait for `gate`, after saying so; at most 30 s (a test never hangs),
    /// counted in `ceilingsReached`.
    final class GatedStore: TokenStorageAdapter, Sendable {
        let inner: InMemoryStore
        let gate: DispatchSemaphore
        let blocked: Arrivals
        let ceilingsReached = Atomic<Int>(0)
        var capabilities: BackendCapabilities { inner.capabilities }

        init(inner: InMemoryStore, gate: DispatchSemaphore, blocked: Arrivals) {
            self.inner = inner
            self.gate = gate
            self.blocked = blocked
        }

        func save(_ value: Data, for key: CredentialKey, options: StorageOptions) throws(CredentialVaultError) {
            blocked.arrive()
            if gate.wait(timeout: .now() + 30) == .timedOut { ceilingsReached.add(1, ordering: .relaxed) }
            try inner.synchronous.save(value, for: key, options: options)
        }
        func load(_ key: CredentialKey) throws(CredentialVaultError) -> Data? { try inner.synchronous.load(key) }
        func take(_ key: CredentialKey) throws(CredentialVaultError) -> Data? { try inner.synchronous.take(key) }
        func delete(_ key: CredentialKey) throws(CredentialVaultError) -> Bool { try inner.synchronous.delete(key) }
        func listKeys(service: String?) throws(CredentialVaultError) -> [CredentialKey] { try inner.synchronous.listKeys(service: service) }
        func metadata(for key: CredentialKey) throws(CredentialVaultError) -> CredentialMetadata? { try inner.synchronous.metadata(for: key) }
        func deleteAll(service: String?) throws(CredentialVaultError) -> Int { try inner.synchronous.deleteAll(service: service) }
    }

    @Test(arguments: ConformanceCheck.allCases)
    func theBlockingOperationsConform(check: ConformanceCheck) async throws {
        try await ConformanceSuite.run(check, on: Self.backend, through: .sync)
    }
}

/// The declaration a third-party backend writes: nothing else.
extension BlockingBackendDefaultsTests.BlockingOnlyStore: AsyncTokenStorageAdapter {}
extension BlockingBackendDefaultsTests.GatedStore: AsyncTokenStorageAdapter {}
