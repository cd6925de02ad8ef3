import CredentialVault
import CredentialVaultTesting
import Foundation
import CredentialVaultTestSupport
import Testing

/// The conformance suite's checks catch what they are about: a backend whose async operations
/// block their thread fails `asyncDoesNotBlockThePool`, one that refuses an invalid argument
/// with another error than `invalidArgument` fails `invalidArguments`.
@Suite(.ownThread) struct ConformanceCanFailTests {
    /// An in-memory store that misbehaves as a careless backend would: its async saves and
    /// loads sleep on the caller's thread (`blocks`, blocking code called from `async`
    /// functions), or its saves refuse invalid arguments with an I/O error (`misreportsRefusals`).
    final class CarelessStore: AsyncTokenStorageAdapter {
        let base = InMemoryStore()
        let blocks: Bool
        let misreportsRefusals: Bool
        var capabilities: BackendCapabilities { base.capabilities }
        var defaultService: String { base.defaultService }

        init(blocks: Bool = false, misreportsRefusals: Bool = false) {
            self.blocks = blocks
            self.misreportsRefusals = misreportsRefusals
        }

        /// Long enough that 32 such calls queued on the check's 2-thread pool stop the heartbeat
        /// for about 6 s (64 calls, save and load): beyond `Heartbeat.blockedPoolBound` (3 s), however idle or busy the machine.
        private func block() { if blocks { Thread.sleep(forTimeInterval: 0.2) } }
        func save(_ value: Data, for key: CredentialKey, options: StorageOptions) async throws(CredentialVaultError) {
            block()
            do {
                try await base.save(value, for: key, options: options)
            } catch .invalidArgument where misreportsRefusals {
                throw .io("write failed")
            }
        }
        func load(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
            block()
            return try await base.load(key)
        }
        func take(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? { try await base.take(key) }
        func delete(_ key: CredentialKey) async throws(CredentialVaultError) -> Bool { try await base.delete(key) }
        func listKeys(service: String?) async throws(CredentialVaultError) -> [CredentialKey] { try await base.listKeys(service: service) }
        func metadata(for key: CredentialKey) async throws(CredentialVaultError) -> CredentialMetadata? { try await base.metadata(for: key) }
        func deleteAll(service: String?) async throws(CredentialVaultError) -> Int { try await base.deleteAll(service: service) }
    }

    @Test func aBackendThatBlocksThePoolFailsTheHeartbeatCheck() async throws {
        let backend = ConformanceBackend(name: "blocking", makeStore: { _ in StoreUnderTest(async: CarelessStore(blocks: true)) }, reopen: nil)
        await withKnownIssue("the heartbeat check must catch a blocking backend") {
            try await ConformanceSuite.run(.asyncDoesNotBlockThePool, on: backend, through: .async)
        }
    }

    @Test func aBackendThatRefusesInvalidArgumentsWithAnotherErrorFailsTheCheck() async throws {
        let backend = ConformanceBackend(
            name: "misreporting", makeStore: { _ in StoreUnderTest(async: CarelessStore(misreportsRefusals: true)) }, reopen: nil)
        await withKnownIssue("the invalid-arguments check must catch a refusal of the wrong case") {
            try await ConformanceSuite.run(.invalidArguments, on: backend, through: .async)
        }
    }
}
