import CredentialVault
import CredentialVaultTesting
import CredentialVaultTestSupport
import Foundation
import Synchronization

/// A store whose calls a test can hold at a `Gate` (as a stalled backend would hold them) and
/// whose calls it can see start and end, so that a test orders its steps by what the store
/// saw, never by a sleep: "the refresh's save is waiting" is `await store.held.reached(1)`,
/// "the sign-out reached the lock" is `await store.started(.exclusiveAccess).reached(2)`.
///
/// A held call waits until its gate is opened; cancelled, it ends at once with
/// `CredentialVaultError.cancelled` (as the package's backends do), the gate still closed.
/// It forwards to `base`, and has exclusive access when `base` has (a `FaultInjectingStore`),
/// none otherwise (an `InMemoryStore`: a store without a lock of its own).
final class GatedStore<Base: AsyncTokenStorageAdapter>: AsyncTokenStorageAdapter {
    typealias Operation = FaultInjectingStore.Operation

    private struct Hold {
        let gate: Gate
        /// Calls left to hold; `nil`: every call.
        var remaining: Int?
    }

    let base: Base
    /// Calls that reached a closed gate (and waited there).
    let held = Arrivals()
    private let holds = Mutex<[Operation: Hold]>([:])
    private let starts: [Operation: Arrivals]
    private let ends: [Operation: Arrivals]

    init(_ base: Base) {
        self.base = base
        starts = Dictionary(uniqueKeysWithValues: Operation.allCases.map { ($0, Arrivals()) })
        ends = Dictionary(uniqueKeysWithValues: Operation.allCases.map { ($0, Arrivals()) })
    }

    /// Holds the next `times` calls of `operation` (every call when `nil`) at a new gate, and
    /// returns it: `open()` it to let them go on.
    @discardableResult
    func hold(_ operation: Operation, times: Int? = nil) -> Gate {
        let gate = Gate()
        holds.withLock { $0[operation] = Hold(gate: gate, remaining: times) }
        return gate
    }

    /// Every call of `operation` arrives here when it starts (before any gate).
    func started(_ operation: Operation) -> Arrivals { starts[operation]! }

    /// Every call of `operation` arrives here once the underlying store answered it.
    func finished(_ operation: Operation) -> Arrivals { ends[operation]! }

    var capabilities: BackendCapabilities { base.capabilities }
    var defaultService: String { base.defaultService }

    /// Records the start of a call and holds it at its gate, if one is set for it.
    private func pass(_ operation: Operation) async throws(CredentialVaultError) {
        starts[operation]!.arrive()
        let gate = holds.withLock { all -> Gate? in
            guard var hold = all[operation] else { return nil }
            if let remaining = hold.remaining {
                guard remaining > 0 else { return nil }
                hold.remaining = remaining - 1
            }
            all[operation] = hold
            return hold.gate
        }
        guard let gate, !gate.isOpen else { return }
        held.arrive()
        do { try await gate.wait() } catch { throw .cancelled }
    }

    /// Runs a forwarded call, recording its end.
    private func forward<T>(_ operation: Operation, _ call: () async throws(CredentialVaultError) -> T) async throws(CredentialVaultError) -> T {
        try await pass(operation)
        defer { ends[operation]!.arrive() }
        return try await call()
    }

    func save(_ value: Data, for key: CredentialKey, options: StorageOptions) async throws(CredentialVaultError) {
        try await forward(.save) { () async throws(CredentialVaultError) in try await base.save(value, for: key, options: options) }
    }

    func load(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        try await forward(.load) { () async throws(CredentialVaultError) in try await base.load(key) }
    }

    func take(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        try await forward(.take) { () async throws(CredentialVaultError) in try await base.take(key) }
    }

    @discardableResult
    func delete(_ key: CredentialKey) async throws(CredentialVaultError) -> Bool {
        try await forward(.delete) { () async throws(CredentialVaultError) in try await base.delete(key) }
    }

    func listKeys(service: String?) async throws(CredentialVaultError) -> [CredentialKey] {
        try await forward(.listKeys) { () async throws(CredentialVaultError) in try await base.listKeys(service: service) }
    }

    func metadata(for key: CredentialKey) async throws(CredentialVaultError) -> CredentialMetadata? {
        try await forward(.metadata) { () async throws(CredentialVaultError) in try await base.metadata(for: key) }
    }

    @discardableResult
    func deleteAll(service: String?) async throws(CredentialVaultError) -> Int {
        try await forward(.deleteAll) { () async throws(CredentialVaultError) in try await base.deleteAll(service: service) }
    }
}

extension GatedStore: ExclusiveAccessStore where Base: ExclusiveAccessStore {
    /// The underlying store's exclusive access, after the gate of `.exclusiveAccess` if any.
    func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await pass(.exclusiveAccess)
        defer { finished(.exclusiveAccess).arrive() }
        return try await base.withExclusiveAccess(body)
    }
}
