import CredentialVault
import Foundation

/// `AsyncTokenStorageAdapter` conformance: the same operations, semantics, deadlines and errors as the
/// synchronous API, never blocking the caller's thread.
///
/// **Where the work runs.** Every operation is the synchronous implementation, run on one of
/// the store's own threads (`threads`, named `credvault-secrets`) while the calling task is
/// suspended: libsecret's D-Bus calls, the wait for a key's lock file, everything. Nothing is
/// answered from memory (there is no cache: the keyring is the truth, and other processes
/// change it), so every call hops; a round trip to the daemon costs far more than the hop.
///
/// **Up to four threads per store** (`threadLimit`), started on demand and ended after 5 s
/// without work. More than one, so that independent operations pipeline (the daemon answers
/// them in turn, but the round trips overlap) and one waiting for a held key lock does not
/// hold up the others; few, because the daemon serialises its work anyway and a stopped daemon
/// ties up every thread in flight until its deadline. Jobs beyond four wait in order, without
/// a thread, and an operation's deadline starts when it starts: when four operations all wait
/// for held key locks (saves and takes of keys another process is saving), the next ones, a
/// `load` of another key included, wait behind them for up to a deadline per four waiters
/// before their own deadline begins. Cancelling the waiting task still ends any of them at
/// once. (Keeping lock waits off these threads, as the sealed file does, is left to do.)
///
/// **Cancellation.** Cancelling the waiting task returns `cancelled` promptly (within a few
/// milliseconds):
/// - not started yet (queued behind other work): the operation never runs, nothing changes;
/// - waiting for the key's lock file (`save`, `take`): the wait stops within 5 ms; nothing has
///   been sent to the Secret Service, so nothing changes;
/// - in a D-Bus call: the call is abandoned at once (its `GCancellable` is cancelled), like at
///   the deadline. As with `timedOut`, **whether a change already sent took effect is
///   unknown**: the daemon still carries out a request it received. A cancelled `save` may
///   have stored the new value, possibly next to the key's older items (readers take the
///   newest, the next save removes the others, as after a crash); a cancelled `delete` or
///   `deleteAll` may have deleted some items; a cancelled `take` may have deleted the item
///   without returning its value. Load again to find out.
///
/// The synchronous API, called on any other thread, behaves exactly as before: it has no task
/// to be cancelled by.
extension SecretServiceStore: AsyncTokenStorageAdapter {
    /// How many threads a store's async operations run on at most (see the extension).
    static let threadLimit = 4

    /// See `save(_:for:options:)`.
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) async throws(CredentialVaultError) {
        try await threads.run { _ throws(CredentialVaultError) in try self.synchronous.save(value, for: key, options: options) }
    }

    /// See `load(_:)`.
    public func load(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        try await threads.run { _ throws(CredentialVaultError) in try self.synchronous.load(key) }
    }

    /// See `take(_:)`. A `take` cancelled once its delete was sent may have consumed the value
    /// without returning it (see "Cancellation").
    public func take(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        try await threads.run { _ throws(CredentialVaultError) in try self.synchronous.take(key) }
    }

    /// See `delete(_:)`.
    @discardableResult
    public func delete(_ key: CredentialKey) async throws(CredentialVaultError) -> Bool {
        try await threads.run { _ throws(CredentialVaultError) in try self.synchronous.delete(key) }
    }

    /// See `listKeys(service:)`.
    public func listKeys(service: String?) async throws(CredentialVaultError) -> [CredentialKey] {
        try await threads.run { _ throws(CredentialVaultError) in try self.synchronous.listKeys(service: service) }
    }

    /// See `metadata(for:)`.
    public func metadata(for key: CredentialKey) async throws(CredentialVaultError) -> CredentialMetadata? {
        try await threads.run { _ throws(CredentialVaultError) in try self.synchronous.metadata(for: key) }
    }

    /// See `deleteAll(service:)`.
    @discardableResult
    public func deleteAll(service: String?) async throws(CredentialVaultError) -> Int {
        try await threads.run { _ throws(CredentialVaultError) in try self.synchronous.deleteAll(service: service) }
    }

    // MARK: - Status and unlocking

    /// See `status()`: on the store's thread, cancellable like the storage operations.
    public func status() async throws(CredentialVaultError) -> SecretServiceStatus {
        // In this synchronous closure only the synchronous `status()` can be called.
        try await threads.run { _ throws(CredentialVaultError) in try self.status() }
    }

    /// See `probe()`: on the store's thread, cancellable (for the resolver's async choice).
    func probe() async throws(CredentialVaultError) -> Probe {
        try await threads.run { _ throws(CredentialVaultError) in try self.probe() }
    }

    /// See `unlockInteractively()`: on the store's thread (which waits for the prompt), so the
    /// caller is never blocked however long the person takes. Cancelling the task dismisses the
    /// prompt and returns `cancelled` at once.
    public func unlockInteractively() async throws(CredentialVaultError) {
        // In this synchronous closure only the synchronous `unlockInteractively()` can be called.
        try await threads.run { _ throws(CredentialVaultError) in try self.unlockInteractively() }
    }
}
