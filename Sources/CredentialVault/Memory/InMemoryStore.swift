#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// A credential store that lives only in this process's guarded memory: for tests, and for
/// secrets that must never touch disk.
///
/// Thread-safe. Values are kept in libsodium-guarded memory (`SecureArena`) and wiped on
/// delete, overwrite and deinit. Honours ephemeral TTLs (against an injectable clock) and `take`.
/// Nothing survives the process; "device-only" holds trivially since nothing leaves it.
public final class InMemoryStore: TokenStorageAdapter {
    private struct Entry {
        var key: CredentialKey
        var handle: SecureArena.Handle
        var accessibility: Accessibility
        var expiresAt: Date?
        /// When the key was first saved (kept by later saves) and last saved.
        var created: Date
        var modified: Date

        func isExpired(at now: Date) -> Bool { expiresAt.map { $0 <= now } ?? false }
    }

    private struct State: ~Copyable {
        var arena = SecureArena()
        var entries: [CredentialKey: Entry] = [:]

        mutating func remove(_ key: CredentialKey) -> Entry? {
            guard let entry = entries.removeValue(forKey: key) else { return nil }
            arena.release(entry.handle)
            return entry
        }

        func copyValue(_ entry: Entry) -> Data {
            arena.withBytes(entry.handle) { Data($0) }
        }
    }

    private let state = Mutex(State())
    private let clock: any CredentialClock

    /// The service used by the string conveniences.
    public let defaultService: String

    /// In memory: not persistent, single process; supports every accessibility and lifetime.
    public var capabilities: BackendCapabilities {
        BackendCapabilities(
            isPersistent: false, supportsDeviceOnly: true, supportsPortable: true,
            supportsEphemeral: true, isCrossProcessSafe: false)
    }

    /// Creates an empty store. The string conveniences use `defaultService`, by default the
    /// application's (`"credential-vault"` for `credvault`); `clock` decides ephemeral expiry
    /// (inject a `ManualClock` in tests).
    public init(
        application: ApplicationIdentifier = .credvault, defaultService: String? = nil, clock: any CredentialClock = SystemClock()
    ) {
        self.defaultService = defaultService ?? application.defaultService
        self.clock = clock
    }

    /// Stores a copy of `value` in guarded memory, wiping any previous value.
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) throws(CredentialVaultError) {
        try key.validate()
        try capabilities.check(options)
        let now = clock.now()
        let expiresAt: Date? = if case .ephemeral(let ttl) = options.lifetime { now.addingTimeInterval(ttl.timeInterval) } else { nil }
        state.withLock { state in
            // An expired value is gone already: saving its key again creates it anew.
            let created = state.remove(key).flatMap { $0.isExpired(at: now) ? nil : $0.created } ?? now
            let handle = value.withUnsafeBytes { state.arena.store($0) }
            state.entries[key] = Entry(
                key: key, handle: handle, accessibility: options.accessibility, expiresAt: expiresAt, created: created, modified: now)
        }
    }

    /// Returns a copy of the value; throws `expired` (and purges) past an ephemeral TTL.
    public func load(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try copyValue(key, consume: false)
    }

    /// Returns the value and deletes it under one lock: concurrent takers never both get it.
    public func take(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try copyValue(key, consume: true)
    }

    private func copyValue(_ key: CredentialKey, consume: Bool) throws(CredentialVaultError) -> Data? {
        try key.validate()
        let now = clock.now()
        return try state.withLock { (state) throws(CredentialVaultError) -> Data? in
            guard let entry = state.entries[key] else { return nil }
            if entry.isExpired(at: now) {
                _ = state.remove(key)
                throw .expired
            }
            let value = state.copyValue(entry)
            if consume { _ = state.remove(key) }
            return value
        }
    }

    /// Wipes and removes the credential.
    @discardableResult
    public func delete(_ key: CredentialKey) throws(CredentialVaultError) -> Bool {
        try key.validate()
        return state.withLock { $0.remove(key) != nil }
    }

    /// Persistent keys, sorted; expired ephemeral entries are purged on the way.
    public func listKeys(service: String?) throws(CredentialVaultError) -> [CredentialKey] {
        let now = clock.now()
        return state.withLock { state in
            for (key, entry) in state.entries where entry.isExpired(at: now) {
                _ = state.remove(key)
            }
            return state.entries.values
                .filter { $0.expiresAt == nil && $0.key.isIn(service: service) }
                .map(\.key)
                .sorted(by: CredentialKey.storageOrder)
        }
    }

    /// Accessibility, lifetime and dates of a stored credential (all known, by the store's clock).
    public func metadata(for key: CredentialKey) throws(CredentialVaultError) -> CredentialMetadata? {
        try key.validate()
        let now = clock.now()
        return state.withLock { state in
            // Past its time to live an ephemeral credential is gone (purged here), as everywhere.
            if let expiry = state.entries[key]?.expiresAt, expiry <= now {
                _ = state.remove(key)
                return nil
            }
            return state.entries[key].map {
                CredentialMetadata(
                    key: $0.key, accessibility: $0.accessibility, isEphemeral: $0.expiresAt != nil, created: $0.created,
                    modified: $0.modified, expiresAt: $0.expiresAt)
            }
        }
    }

    /// Wipes every credential (of one service when given).
    @discardableResult
    public func deleteAll(service: String?) throws(CredentialVaultError) -> Int {
        state.withLock { state in
            let doomed = state.entries.keys.filter { $0.isIn(service: service) }
            for key in doomed { _ = state.remove(key) }
            return doomed.count
        }
    }
}
