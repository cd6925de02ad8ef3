import CLibSecret
import CSodium
import CredentialVault
import Foundation

/// A credential store in the Secret Service (GNOME Keyring, KeePassXC, ...) through libsecret.
///
/// **Convention.** Persistent credentials are items of the default collection with the
/// attributes `service` and `username`, like `secret-tool` and Python `keyring` write them: each
/// tool finds, reads and deletes what the others stored. Values are bytes (content type
/// `application/octet-stream`, NUL bytes kept); labels read `"<account> on <service>"` unless
/// the key has its own. Accessibility is recorded in an attribute of this backend's; items
/// other tools wrote count as device-only.
///
/// **Ephemeral** credentials go to the `session` collection, which the daemon keeps in memory
/// only (gone at logout, kept across restarts of this process), with their expiry in an
/// attribute: past it they are purged and `load`/`take` throw `expired`. They are never listed.
///
/// **Never hang, never lie.** Each operation has a deadline (`SecretServiceConfiguration.timeout`)
/// enforced by cancelling its libsecret calls: a daemon that does not answer gives `timedOut`,
/// no session bus or no Secret Service gives `notAvailable` at once. A locked default collection
/// gives `locked`, never "not found" (libsecret itself answers a lookup on a locked collection
/// with nothing). Nothing here ever asks for a password: only `unlockInteractively()` may.
///
/// **Replacing and taking.** `save` creates a new item and then deletes the key's older items,
/// so a crash in between leaves two items, of which readers take the newest (by the daemon's
/// modification time, then the order it created them) and the next save removes the other.
/// `take` reads the newest item and deletes it, and returns the value only when its own delete
/// removed that item: when several callers race to take the same value, at most one gets it
/// (the daemon serialises deletes; the others get `nil`). The Secret Service has no atomic
/// read-and-delete, so a `save` that lands between a taker's read and its delete is not lost:
/// it is a new item, which the taker does not delete.
///
/// The connection to the service is made on first use and kept for the process lifetime.
/// Thread-safe: every instance may be used from any thread.
public final class SecretServiceStore: TokenStorageAdapter {
    /// The store's configuration.
    public let configuration: SecretServiceConfiguration
    private let connection = ServiceConnection.shared
    private let naming: CredentialNaming

    /// Creates a store. It connects on first use, so creating one never fails; `status()`
    /// tells whether the service is there and unlocked.
    public init(configuration: SecretServiceConfiguration = SecretServiceConfiguration()) {
        self.configuration = configuration
        naming = CredentialNaming(prefix: configuration.serviceNamePrefix)
    }

    /// The service of the string conveniences (`configuration.defaultService`).
    public var defaultService: String { configuration.defaultService }

    /// Persistent, device-only and portable, ephemeral (the `session` collection), and safe for
    /// several processes at once (the daemon serialises every change).
    public var capabilities: BackendCapabilities {
        BackendCapabilities(
            isPersistent: true, supportsDeviceOnly: true, supportsPortable: true,
            supportsEphemeral: true, isCrossProcessSafe: true)
    }

    // MARK: - TokenStorageAdapter

    /// Stores `value` under `key`: a new item in the default collection (persistent) or the
    /// `session` collection (ephemeral), after which the key's older items are deleted.
    /// Throws `locked` when the default collection is locked (also for an ephemeral credential:
    /// an older persistent value under the same key could not be removed), `notAvailable` when
    /// there is no default collection (a persistent credential) or no service.
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) throws(CredentialVaultError) {
        try key.validate()
        try capabilities.check(options)
        let now = configuration.clock.now()
        try perform { (call) throws(CredentialVaultError) in
            let main = try call.collection(.default)
            if let main, main.isLocked { throw .locked }
            let target: CollectionProxy
            let other: CollectionProxy?
            var expiresAt: Date?
            if case .ephemeral(let ttl) = options.lifetime {
                guard let session = try call.collection(.session) else {
                    throw .unsupported("this Secret Service has no session collection for ephemeral credentials")
                }
                if session.isLocked { throw .locked }
                let (seconds, attoseconds) = ttl.components
                expiresAt = now.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
                (target, other) = (session, main)
            } else {
                guard let main else {
                    throw .notAvailable(
                        "the Secret Service has no default collection: create a keyring (log in to a desktop session once, or use seahorse)")
                }
                (target, other) = (main, try unlockedSession(call))
            }
            guard
                let created = try call.createItem(
                    in: target, attributes: naming.attributes(of: key, options: options, expiresAt: expiresAt),
                    label: key.displayLabel, value: value)
            else {
                return  // already replaced by a concurrent save of the same key, which cleans up
            }
            // Replace the key's previous value. In the same collection only strictly older items
            // go, so two processes saving the same key at once keep the newer item, not neither.
            let mine = created.order
            for old in try call.search(target, attributes: naming.identity(of: key)) where old.order < mine {
                _ = try call.delete(old)
            }
            if let other {
                for old in try call.search(other, attributes: naming.identity(of: key)) where old.modified <= created.modified {
                    _ = try call.delete(old)
                }
            }
            try purgeExpired(call, now: now)
        }
    }

    /// The value of the key's newest item: an ephemeral one first, else a persistent one.
    /// Throws `expired` (and purges it) past an ephemeral credential's time to live, `locked`
    /// when the default collection is locked (never `nil` for a credential it cannot see).
    public func load(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try key.validate()
        let now = configuration.clock.now()
        return try perform { (call) throws(CredentialVaultError) -> Data? in
            guard let found = try newest(call, key) else { return nil }
            if found.credential.isExpired(at: now) {
                for item in found.all { _ = try call.delete(item) }
                throw .expired
            }
            return try call.secret(of: found.credential.item)
        }
    }

    /// Reads the key's newest item and deletes it; the value is returned only when this call's
    /// delete removed that item, so of several callers racing for one value at most one gets it.
    /// Older duplicates are deleted too. Throws `expired` past an ephemeral credential's time
    /// to live (after purging it).
    public func take(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try key.validate()
        let now = configuration.clock.now()
        return try perform { (call) throws(CredentialVaultError) -> Data? in
            guard let found = try newest(call, key) else { return nil }
            if found.credential.isExpired(at: now) {
                for item in found.all { _ = try call.delete(item) }
                throw .expired
            }
            guard var value = try call.secret(of: found.credential.item) else { return nil }
            let removed: Bool
            do throws(CredentialVaultError) {
                removed = try call.delete(found.credential.item)
            } catch {
                wipe(&value)
                throw error
            }
            guard removed else {
                // Someone else took (or deleted) it between our read and our delete.
                wipe(&value)
                return nil
            }
            for item in found.all where item !== found.credential.item { _ = try call.delete(item) }
            return value
        }
    }

    /// Deletes every item of the key (ephemeral and persistent); returns whether there was one.
    /// Throws `locked` when the default collection is locked, before deleting anything.
    @discardableResult
    public func delete(_ key: CredentialKey) throws(CredentialVaultError) -> Bool {
        try key.validate()
        let now = configuration.clock.now()
        return try perform { (call) throws(CredentialVaultError) -> Bool in
            let main = try unlockedDefault(call)
            var deleted = false
            for collection in [try unlockedSession(call), main].compactMap({ $0 }) {
                for item in try call.search(collection, attributes: naming.identity(of: key)) where try call.delete(item) {
                    deleted = true
                }
            }
            try purgeExpired(call, now: now)
            return deleted
        }
    }

    /// The keys of the default collection's items that have `service` and `username`
    /// attributes (under the configured prefix), of one service when given, sorted by service
    /// then account. Ephemeral credentials are never listed; expired ones are purged on the way.
    public func listKeys(service: String?) throws(CredentialVaultError) -> [CredentialKey] {
        let now = configuration.clock.now()
        return try perform { (call) throws(CredentialVaultError) -> [CredentialKey] in
            let main = try unlockedDefault(call)
            try purgeExpired(call, now: now)
            guard let main else { return [] }
            var newestByKey: [CredentialKey: StoredCredential] = [:]
            for item in try call.search(main, attributes: naming.scope(service: service)) {
                guard let credential = StoredCredential(item, naming: naming, inSession: false) else { continue }
                if let known = newestByKey[credential.key], !(known.item.order < item.order) { continue }
                newestByKey[credential.key] = credential
            }
            return newestByKey.values.map(\.key).sorted(by: Self.storageOrder)
        }
    }

    /// What the key's newest item records: accessibility (device-only for items other tools
    /// wrote) and whether it is ephemeral. `nil` when missing or expired (then purged).
    public func metadata(for key: CredentialKey) throws(CredentialVaultError) -> CredentialMetadata? {
        try key.validate()
        let now = configuration.clock.now()
        return try perform { (call) throws(CredentialVaultError) -> CredentialMetadata? in
            guard let found = try newest(call, key) else { return nil }
            if found.credential.isExpired(at: now) {
                for item in found.all { _ = try call.delete(item) }
                return nil
            }
            return found.credential.metadata
        }
    }

    /// Deletes every credential of this store (of one service when given), ephemeral ones
    /// included, and returns how many keys were deleted. Without a `serviceNamePrefix` that is
    /// every item of the default collection with `service` and `username` attributes, whoever
    /// wrote it. Throws `locked` when the default collection is locked, before deleting anything.
    @discardableResult
    public func deleteAll(service: String?) throws(CredentialVaultError) -> Int {
        try perform { (call) throws(CredentialVaultError) -> Int in
            let main = try unlockedDefault(call)
            var deleted = Set<CredentialKey>()
            for (collection, inSession) in [(try unlockedSession(call), true), (main, false)] {
                guard let collection else { continue }
                for item in try call.search(collection, attributes: naming.scope(service: service)) {
                    guard let credential = StoredCredential(item, naming: naming, inSession: inSession) else { continue }
                    if try call.delete(item) { deleted.insert(credential.key) }
                }
            }
            return deleted.count
        }
    }

    // MARK: - Status

    /// Whether the Secret Service is reachable and its default collection unlocked, and where
    /// it stores. Never prompts. Throws `notAvailable` (no session bus, no Secret Service, or no
    /// default collection) or `timedOut`.
    public func status() throws(CredentialVaultError) -> SecretServiceStatus {
        try perform { (call) throws(CredentialVaultError) -> SecretServiceStatus in
            guard let main = try call.collection(.default) else {
                throw .notAvailable("the Secret Service has no default collection (keyring)")
            }
            return SecretServiceStatus(isLocked: main.isLocked, collectionLabel: main.label, collectionPath: main.objectPath)
        }
    }

    // MARK: - Helpers

    /// Runs `body` with a call whose deadline starts now.
    func perform<T>(_ body: (ServiceCall) throws(CredentialVaultError) -> T) throws(CredentialVaultError) -> T {
        let deadline = Deadline(configuration.timeout)
        defer { deadline.finish() }
        return try body(ServiceCall(connection: connection, deadline: deadline))
    }

    /// The default collection, or `nil` when there is none; throws `locked` when it is locked.
    private func unlockedDefault(_ call: ServiceCall) throws(CredentialVaultError) -> CollectionProxy? {
        guard let main = try call.collection(.default) else { return nil }
        if main.isLocked { throw .locked }
        return main
    }

    /// The session collection, or `nil` when there is none; throws `locked` when it is locked.
    private func unlockedSession(_ call: ServiceCall) throws(CredentialVaultError) -> CollectionProxy? {
        guard let session = try call.collection(.session) else { return nil }
        if session.isLocked { throw .locked }
        return session
    }

    /// The key's newest item (ephemeral first, then persistent) and all its items.
    /// Throws `locked` when the credential could be in a locked default collection.
    private func newest(_ call: ServiceCall, _ key: CredentialKey) throws(CredentialVaultError)
        -> (credential: StoredCredential, all: [ItemProxy])?
    {
        if let session = try unlockedSession(call) {
            let items = try call.search(session, attributes: naming.identity(of: key))
            if let best = items.max(by: { $0.order < $1.order }),
                let credential = StoredCredential(best, naming: naming, inSession: true)
            {
                return (credential, items)
            }
        }
        guard let main = try unlockedDefault(call) else { return nil }
        let items = try call.search(main, attributes: naming.identity(of: key))
        guard let best = items.max(by: { $0.order < $1.order }),
            let credential = StoredCredential(best, naming: naming, inSession: false)
        else { return nil }
        return (credential, items)
    }

    /// Deletes the expired ephemeral items of the session collection (those of every store:
    /// they are dead anyway).
    private func purgeExpired(_ call: ServiceCall, now: Date) throws(CredentialVaultError) {
        guard let session = try call.collection(.session), !session.isLocked else { return }
        for item in try call.search(session, attributes: [ItemAttribute.accessibility: ItemAttribute.deviceOnly]) {
            guard let expiry = ExpiryStamp.decode(item.attributes[ItemAttribute.expires]), expiry <= now else { continue }
            _ = try call.delete(item)
        }
    }

    /// By service, then account, in byte order (stable across locales), like the other backends.
    static func storageOrder(_ lhs: CredentialKey, _ rhs: CredentialKey) -> Bool {
        if lhs.service != rhs.service { return lhs.service.utf8.lexicographicallyPrecedes(rhs.service.utf8) }
        return lhs.account.utf8.lexicographicallyPrecedes(rhs.account.utf8)
    }
}

/// Overwrites a copy of a secret that is about to be dropped (`sodium_memzero`, which the
/// compiler may not optimise away).
func wipe(_ data: inout Data) {
    data.withUnsafeMutableBytes { buffer in
        if let base = buffer.baseAddress, buffer.count > 0 { sodium_memzero(base, buffer.count) }
    }
}
