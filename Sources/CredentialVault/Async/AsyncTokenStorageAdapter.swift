#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The asynchronous form of the storage protocol: the same operations, semantics and errors as
/// `TokenStorageAdapter`, for callers on the main actor or Swift's cooperative pool.
///
/// A conforming backend never blocks the calling thread: blocking work (D-Bus calls, file
/// writes made durable with `fdatasync`, lock waits, database round trips) runs on threads the
/// backend owns (`StoreThreads`) or uses non-blocking I/O, while the caller suspends. What is
/// already in memory (a load from an open sealed file, the in-memory store) is answered on the
/// caller's thread, without a hop. Lock waits and deadlines are those of the synchronous API.
///
/// Cancelling the task gives `CredentialVaultError.cancelled` promptly. While the operation
/// waits (for a lock, or behind other work on the backend's threads) nothing has been done, and
/// nothing is. Once it is under way, a backend either completes it first (the sealed file's
/// writes: a few milliseconds, so a vault is never left half-written) or interrupts it (the
/// Secret Service's D-Bus calls), after which whether a write took effect is unknown, as after
/// `timedOut`. Each backend documents which.
///
/// Every backend of this package conforms to both protocols; the conformance suite runs each
/// check through both.
public protocol AsyncTokenStorageAdapter: Sendable {
    /// What this backend can honour; anything else throws `unsupported`.
    var capabilities: BackendCapabilities { get }

    /// The service used by the string conveniences `save(key:value:)`, `load(key:)` and
    /// `delete(key:)`, whose single key becomes the account.
    var defaultService: String { get }

    /// Stores `value` under `key`, replacing any previous value and options.
    func save(_ value: Data, for key: CredentialKey, options: StorageOptions) async throws(CredentialVaultError)

    /// Returns the value stored under `key`, or `nil` when there is none.
    /// Throws `expired` for an ephemeral credential past its time to live (and purges it).
    func load(_ key: CredentialKey) async throws(CredentialVaultError) -> Data?

    /// Returns the value stored under `key` and deletes it in the same step (single use).
    func take(_ key: CredentialKey) async throws(CredentialVaultError) -> Data?

    /// Deletes the credential; returns whether there was one.
    @discardableResult
    func delete(_ key: CredentialKey) async throws(CredentialVaultError) -> Bool

    /// The keys of the stored persistent credentials, optionally of one service, sorted by
    /// service then account. Ephemeral credentials are never listed.
    func listKeys(service: String?) async throws(CredentialVaultError) -> [CredentialKey]

    /// What is known about a stored credential without reading its value (`nil` when missing).
    func metadata(for key: CredentialKey) async throws(CredentialVaultError) -> CredentialMetadata?

    /// Deletes every credential (of one service when given), ephemeral ones included;
    /// returns how many were deleted.
    @discardableResult
    func deleteAll(service: String?) async throws(CredentialVaultError) -> Int
}

extension AsyncTokenStorageAdapter {
    /// Stores a persistent, device-only credential.
    public func save(_ value: Data, for key: CredentialKey) async throws(CredentialVaultError) {
        try await save(value, for: key, options: .default)
    }

    /// All persistent keys.
    public func listKeys() async throws(CredentialVaultError) -> [CredentialKey] {
        try await listKeys(service: nil)
    }

    /// The persistent keys `query` matches, sorted by service then account.
    public func listKeys(_ query: KeyQuery) async throws(CredentialVaultError) -> [CredentialKey] {
        try await listKeys(service: query.service).filter(query.matches)
    }

    /// Deletes every credential.
    @discardableResult
    public func deleteAll() async throws(CredentialVaultError) -> Int {
        try await deleteAll(service: nil)
    }

    /// Stores a UTF-8 string under `key` (account) in `defaultService`. The bytes it converts
    /// the string to are wiped before it returns.
    public func save(key: String, value: String) async throws(CredentialVaultError) {
        var data = Data(value.utf8)
        defer { data.resetBytes(in: 0..<data.count) }
        try await save(data, for: CredentialKey(service: defaultService, account: key), options: .default)
    }

    /// Loads the string stored under `key` in `defaultService`; throws `invalidArgument` when the
    /// stored bytes are not UTF-8. The loaded bytes are wiped once the string is made.
    public func load(key: String) async throws(CredentialVaultError) -> String? {
        guard var data = try await load(CredentialKey(service: defaultService, account: key)) else { return nil }
        defer { data.resetBytes(in: 0..<data.count) }
        return try StoredText.decode(data)
    }

    /// Deletes the string stored under `key` in `defaultService`.
    public func delete(key: String) async throws(CredentialVaultError) {
        try await delete(CredentialKey(service: defaultService, account: key))
    }
}

/// UTF-8 text out of stored bytes, for the string conveniences of both protocols.
enum StoredText {
    static func decode(_ data: Data) throws(CredentialVaultError) -> String {
        let string = data.withUnsafeBytes { String(validating: $0.bindMemory(to: UInt8.self), as: UTF8.self) }
        guard let string else { throw .invalidArgument("the stored value is not UTF-8 text; load it as bytes") }
        return string
    }
}
