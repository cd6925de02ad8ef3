#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The storage protocol every backend implements: small, synchronous, throwing and `Sendable`.
/// Its asynchronous twin, for the main actor and the cooperative pool, is `AsyncTokenStorageAdapter`.
///
/// Values are bytes and round-trip exactly (empty, binary with NUL and 0xFF, up to at least
/// 1 MiB). A missing credential is `nil`, never an error.
public protocol TokenStorageAdapter: Sendable {
    /// What this backend can honour; anything else throws `unsupported`.
    var capabilities: BackendCapabilities { get }

    /// The service used by the string conveniences `save(key:value:)`, `load(key:)` and
    /// `delete(key:)`, whose single key becomes the account.
    var defaultService: String { get }

    /// Stores `value` under `key`, replacing any previous value and options.
    func save(_ value: Data, for key: CredentialKey, options: StorageOptions) throws(CredentialVaultError)

    /// Returns the value stored under `key`, or `nil` when there is none.
    /// Throws `expired` for an ephemeral credential past its time to live (and purges it).
    func load(_ key: CredentialKey) throws(CredentialVaultError) -> Data?

    /// Returns the value stored under `key` and deletes it in the same step, so that two
    /// callers never both get it (single use). `nil` when there is none.
    func take(_ key: CredentialKey) throws(CredentialVaultError) -> Data?

    /// Deletes the credential; returns whether there was one. Deleting a missing key is not an error.
    @discardableResult
    func delete(_ key: CredentialKey) throws(CredentialVaultError) -> Bool

    /// The keys of the stored persistent credentials, optionally of one service, sorted by
    /// service then account. Ephemeral credentials are never listed.
    func listKeys(service: String?) throws(CredentialVaultError) -> [CredentialKey]

    /// What is known about a stored credential without reading its value (`nil` when missing).
    func metadata(for key: CredentialKey) throws(CredentialVaultError) -> CredentialMetadata?

    /// Deletes every credential (of one service when given), ephemeral ones included;
    /// returns how many were deleted.
    @discardableResult
    func deleteAll(service: String?) throws(CredentialVaultError) -> Int
}

/// What a backend records about a credential besides its value.
///
/// The dates are `nil` where the backend does not know them:
/// - in memory (`InMemoryStore`): all known, by the store's clock;
/// - in a sealed file (`SealedFileStore`): by the store's clock (`SealedFileConfiguration.clock`),
///   to the millisecond (`created` is `nil` only for a record whose file says 0: unknown);
/// - in the Secret Service (`SecretServiceStore`): the daemon's `Created` and `Modified` item
///   properties, in whole seconds by the daemon's clock. A save that changes the credential's
///   accessibility, and every save of an ephemeral one, writes a new item, so `created` starts
///   again there; the expiry is the store's, by `SecretServiceConfiguration.clock`.
public struct CredentialMetadata: Sendable, Hashable {
    /// The key, with its label when the backend keeps one.
    public var key: CredentialKey
    /// Where the credential may be read.
    public var accessibility: Accessibility
    /// Whether it is ephemeral.
    public var isEphemeral: Bool
    /// When the key was first saved (a save of an existing key keeps it; after a delete or
    /// `take`, the next save creates it anew).
    public var created: Date?
    /// When the credential was last saved.
    public var modified: Date?
    /// When an ephemeral credential expires; `nil` for persistent ones.
    public var expiresAt: Date?

    /// Creates metadata (the dates default to unknown).
    public init(
        key: CredentialKey, accessibility: Accessibility, isEphemeral: Bool, created: Date? = nil, modified: Date? = nil,
        expiresAt: Date? = nil
    ) {
        self.key = key
        self.accessibility = accessibility
        self.isEphemeral = isEphemeral
        self.created = created
        self.modified = modified
        self.expiresAt = expiresAt
    }
}

extension TokenStorageAdapter {
    /// The default service of the string conveniences: `"credential-vault"`.
    public var defaultService: String { "credential-vault" }

    /// Stores a persistent, device-only credential.
    public func save(_ value: Data, for key: CredentialKey) throws(CredentialVaultError) {
        try save(value, for: key, options: .default)
    }

    /// All persistent keys.
    public func listKeys() throws(CredentialVaultError) -> [CredentialKey] {
        try listKeys(service: nil)
    }

    /// The persistent keys `query` matches, sorted by service then account.
    public func listKeys(_ query: KeyQuery) throws(CredentialVaultError) -> [CredentialKey] {
        try listKeys(service: query.service).filter(query.matches)
    }

    /// Deletes every credential.
    @discardableResult
    public func deleteAll() throws(CredentialVaultError) -> Int {
        try deleteAll(service: nil)
    }

    /// Stores a UTF-8 string under `key` (account) in `defaultService`, as Swift auth SDKs do.
    /// The bytes it converts the string to are wiped before it returns (the caller's `String`
    /// is the caller's to manage).
    public func save(key: String, value: String) throws(CredentialVaultError) {
        var data = Data(value.utf8)
        defer { data.resetBytes(in: 0..<data.count) }
        try save(data, for: CredentialKey(service: defaultService, account: key), options: .default)
    }

    /// Loads the string stored under `key` in `defaultService`; throws `invalidArgument` when the
    /// stored bytes are not UTF-8 (they are left untouched). The loaded bytes are wiped once
    /// the string is made: the returned `String` is the only copy left.
    public func load(key: String) throws(CredentialVaultError) -> String? {
        guard var data = try load(CredentialKey(service: defaultService, account: key)) else { return nil }
        defer { data.resetBytes(in: 0..<data.count) }
        return try StoredText.decode(data)
    }

    /// Deletes the string stored under `key` in `defaultService`.
    public func delete(key: String) throws(CredentialVaultError) {
        try delete(CredentialKey(service: defaultService, account: key))
    }
}

extension TokenStorageAdapter {
    /// This store through the synchronous protocol only. Inside `async` code Swift picks a
    /// backend's async operations; where the blocking ones are meant (on a thread of your own,
    /// in a test of the sync API), call them through this: `try store.synchronous.load(key)`.
    public var synchronous: any TokenStorageAdapter { self }
}
