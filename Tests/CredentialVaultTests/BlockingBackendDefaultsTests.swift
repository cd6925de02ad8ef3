import CredentialVault
import CredentialVaultTesting
import Foundation
import CredentialVaultTestSupport
import Testing

/// A third-party backend that implements only the blocking operations, each of which blocks its
/// thread (as file or network I/O does), and declares `AsyncTokenStorage` with no operation of
/// its own: the library's default async operations pass the whole conformance suite through
/// the async API, the check that the pool is never blocked included.
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

    /// Operations that block 1 ms, and (for the pool check) 40 ms: 32 concurrent round trips
    /// that blocked the pool's threads would then stop its heartbeat for seconds, far beyond the
    /// check's bound, on any machine.
    static func backend(pause: UInt32) -> ConformanceBackend {
        ConformanceBackend(
            name: "blocking operations only", makeStore: { clock in StoreUnderTest(BlockingOnlyStore(inner: InMemoryStore(clock: clock), pause: pause)) },
            reopen: nil)
    }
    static let backend = backend(pause: 1_000)

    @Test(arguments: ConformanceCheck.allCases)
    func theDefaultAsyncOperationsConform(check: ConformanceCheck) async throws {
        try await ConformanceSuite.run(check, on: check == .asyncDoesNotBlockThePool ? Self.backend(pause: 40_000) : Self.backend, through: .async)
    }

    @Test(arguments: ConformanceCheck.allCases)
    func theBlockingOperationsConform(check: ConformanceCheck) async throws {
        try await ConformanceSuite.run(check, on: Self.backend, through: .sync)
    }
}

/// The declaration a third-party backend writes: nothing else.
extension BlockingBackendDefaultsTests.BlockingOnlyStore: AsyncTokenStorage {}
