import CredentialVault
import Foundation
import Synchronization

/// A store for testing code that uses a credential store: it forwards to a real store
/// (in memory by default) and can make any operation throw any error, stall, or both, for a
/// number of calls or until cleared; it counts the calls of each operation.
///
/// A stall blocks the calling thread in the synchronous API (as a slow backend would) and
/// suspends the task in the asynchronous one (ending early with `cancelled` when the task is
/// cancelled, as the package's backends do).
///
/// ```swift
/// let store = FaultInjectingStore()
/// store.inject(.fail(.locked), into: .load)              // every load throws `locked`
/// store.inject(.stall(.seconds(3)), into: .save, times: 1)  // the next save takes 3 s
/// ```
public final class FaultInjectingStore: TokenStorageAdapter, AsyncTokenStorageAdapter, ExclusiveAccessStore {
    /// The operations a fault can be injected into.
    public enum Operation: String, Sendable, Hashable, CaseIterable {
        case save, load, take, delete, listKeys, metadata, deleteAll
        /// `withExclusiveAccess`, before its body runs.
        case exclusiveAccess
    }

    /// What an operation does instead of (or before) its work.
    public enum Fault: Sendable, Hashable {
        /// Throws the error; the underlying store is not called.
        case fail(CredentialVaultError)
        /// Waits, then does the work.
        case stall(Duration)
        /// Waits, then throws the error.
        case stallThenFail(Duration, CredentialVaultError)
    }

    private struct Armed {
        var fault: Fault
        /// Calls left to affect; `nil`: every call until cleared.
        var remaining: Int?
    }

    private struct State {
        var armed: [Operation: Armed] = [:]
        var calls: [Operation: Int] = [:]
    }

    private let base: any TokenStorageAdapter & AsyncTokenStorageAdapter
    private let state = Mutex(State())
    /// The lock of `withExclusiveAccess` when the underlying store has none of its own.
    private let exclusive = AsyncExclusion()

    /// Wraps `base` (a fresh `InMemoryStore` by default).
    public init(wrapping base: any TokenStorageAdapter & AsyncTokenStorageAdapter = InMemoryStore()) {
        self.base = base
    }

    /// The underlying store's capabilities.
    public var capabilities: BackendCapabilities { base.capabilities }
    /// The underlying store's default service.
    public var defaultService: String { base.defaultService }

    /// Makes the next `times` calls of `operation` (every call when `nil`) do `fault`,
    /// replacing what was injected there before.
    public func inject(_ fault: Fault, into operation: Operation, times: Int? = nil) {
        state.withLock { $0.armed[operation] = Armed(fault: fault, remaining: times.map { max(0, $0) }) }
    }

    /// Removes the fault of `operation`, or of every operation when `nil`.
    public func clear(_ operation: Operation? = nil) {
        state.withLock { s in
            if let operation { s.armed[operation] = nil } else { s.armed = [:] }
        }
    }

    /// How many times `operation` was called (faulted calls included), through either API.
    public func calls(of operation: Operation) -> Int { state.withLock { $0.calls[operation] ?? 0 } }

    // MARK: - Faults

    /// Counts the call and returns the fault it gets, if any.
    private func arm(_ operation: Operation) -> Fault? {
        state.withLock { s in
            s.calls[operation, default: 0] += 1
            guard var armed = s.armed[operation] else { return nil }
            if let remaining = armed.remaining {
                if remaining == 0 { return nil }
                armed.remaining = remaining - 1
            }
            s.armed[operation] = armed
            return armed.fault
        }
    }

    private func strike(_ operation: Operation) throws(CredentialVaultError) {
        switch arm(operation) {
        case nil: return
        case .fail(let error): throw error
        case .stall(let wait): Thread.sleep(forTimeInterval: Self.seconds(wait))
        case .stallThenFail(let wait, let error):
            Thread.sleep(forTimeInterval: Self.seconds(wait))
            throw error
        }
    }

    private func strike(_ operation: Operation) async throws(CredentialVaultError) {
        func stall(_ wait: Duration) async throws(CredentialVaultError) {
            do { try await Task.sleep(for: wait) } catch { throw .cancelled }
        }
        switch arm(operation) {
        case nil: return
        case .fail(let error): throw error
        case .stall(let wait): try await stall(wait)
        case .stallThenFail(let wait, let error):
            try await stall(wait)
            throw error
        }
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return max(0, Double(seconds) + Double(attoseconds) / 1e18)
    }

    // MARK: - TokenStorageAdapter

    /// Forwards to the underlying store, after the injected fault if any.
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) throws(CredentialVaultError) {
        try strike(.save)
        try base.synchronous.save(value, for: key, options: options)
    }

    /// Forwards to the underlying store, after the injected fault if any.
    public func load(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try strike(.load)
        return try base.synchronous.load(key)
    }

    /// Forwards to the underlying store, after the injected fault if any.
    public func take(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try strike(.take)
        return try base.synchronous.take(key)
    }

    /// Forwards to the underlying store, after the injected fault if any.
    @discardableResult
    public func delete(_ key: CredentialKey) throws(CredentialVaultError) -> Bool {
        try strike(.delete)
        return try base.synchronous.delete(key)
    }

    /// Forwards to the underlying store, after the injected fault if any.
    public func listKeys(service: String?) throws(CredentialVaultError) -> [CredentialKey] {
        try strike(.listKeys)
        return try base.synchronous.listKeys(service: service)
    }

    /// Forwards to the underlying store, after the injected fault if any.
    public func metadata(for key: CredentialKey) throws(CredentialVaultError) -> CredentialMetadata? {
        try strike(.metadata)
        return try base.synchronous.metadata(for: key)
    }

    /// Forwards to the underlying store, after the injected fault if any.
    @discardableResult
    public func deleteAll(service: String?) throws(CredentialVaultError) -> Int {
        try strike(.deleteAll)
        return try base.synchronous.deleteAll(service: service)
    }

    // MARK: - AsyncTokenStorageAdapter

    /// Forwards to the underlying store, after the injected fault if any.
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) async throws(CredentialVaultError) {
        try await strike(.save)
        try await base.save(value, for: key, options: options)
    }

    /// Forwards to the underlying store, after the injected fault if any.
    public func load(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        try await strike(.load)
        return try await base.load(key)
    }

    /// Forwards to the underlying store, after the injected fault if any.
    public func take(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        try await strike(.take)
        return try await base.take(key)
    }

    /// Forwards to the underlying store, after the injected fault if any.
    @discardableResult
    public func delete(_ key: CredentialKey) async throws(CredentialVaultError) -> Bool {
        try await strike(.delete)
        return try await base.delete(key)
    }

    /// Forwards to the underlying store, after the injected fault if any.
    public func listKeys(service: String?) async throws(CredentialVaultError) -> [CredentialKey] {
        try await strike(.listKeys)
        return try await base.listKeys(service: service)
    }

    /// Forwards to the underlying store, after the injected fault if any.
    public func metadata(for key: CredentialKey) async throws(CredentialVaultError) -> CredentialMetadata? {
        try await strike(.metadata)
        return try await base.metadata(for: key)
    }

    /// Forwards to the underlying store, after the injected fault if any.
    @discardableResult
    public func deleteAll(service: String?) async throws(CredentialVaultError) -> Int {
        try await strike(.deleteAll)
        return try await base.deleteAll(service: service)
    }

    // MARK: - ExclusiveAccessStore

    /// The underlying store's exclusive access when it has one; else an in-process lock that
    /// shuts out the other `withExclusiveAccess` bodies of this store (not its plain writes: the
    /// underlying store has no lock of its own to hold them back), with a 10 s wait (`busy`)
    /// and prompt cancellation (`cancelled`). After the injected fault if any.
    public func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await strike(.exclusiveAccess)
        if let exclusive = base as? any ExclusiveAccessStore { return try await exclusive.withExclusiveAccess(body) }
        return try await exclusive.run(body)
    }
}
