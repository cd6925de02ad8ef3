import CLibSecret
import CSodium
import CredentialVault
import Foundation
import Synchronization

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
/// it is a new item, which the taker does not delete. This is why `save` does not use the
/// Secret Service's `CreateItem` with *replace* (one keyring write instead of two): a replaced
/// item keeps its object path, which a racing taker would then delete with the new value.
///
/// **Cost.** The connection to the service is made on first use and kept for the process
/// lifetime, with the collection paths behind the `default` and `session` aliases. Every call
/// is one D-Bus round trip on object paths (no proxy per collection or item): a `load` is
/// `SearchItems` + `GetSecrets` like a bare libsecret lookup; the lock state comes from the
/// search's list of locked items, or from the collection when nothing matched. Expired ephemeral
/// items are swept when one this store wrote has expired, else at most once a minute per process.
/// Thread-safe: every instance may be used from any thread.
public final class SecretServiceStore: TokenStorageAdapter {
    /// The store's configuration.
    public let configuration: SecretServiceConfiguration
    private let connection = ServiceConnection.shared
    private let naming: CredentialNaming
    /// The earliest expiry of the ephemeral items this store wrote and has not purged yet
    /// (by `configuration.clock`).
    private let pendingExpiry = Mutex<Date?>(nil)

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
    ///
    /// Round trips: `SearchItems` (the key's items so far, which also proves the collections
    /// they are in unlocked), `CreateItem`, `SearchItems` again (to see concurrent saves of the
    /// same key), one `Item.Delete` per older item; plus `Properties.Get(Locked)` when no item
    /// of the key proved the collection unlocked, and `Properties.GetAll` of the items only a
    /// concurrent save can have created.
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) throws(CredentialVaultError) {
        try key.validate()
        try capabilities.check(options)
        let now = configuration.clock.now()
        var expiresAt: Date?
        if case .ephemeral(let ttl) = options.lifetime {
            let (seconds, attoseconds) = ttl.components
            expiresAt = now.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
        }
        try perform { (call) throws(CredentialVaultError) in
            let main = try call.collectionPath(.default)
            let session = try call.collectionPath(.session)
            let target: String
            if expiresAt != nil {
                guard let session else {
                    throw .unsupported("this Secret Service has no session collection for ephemeral credentials")
                }
                target = session
            } else {
                guard let main else {
                    throw .notAvailable(
                        "the Secret Service has no default collection: create a keyring (log in to a desktop session once, or use seahorse)")
                }
                target = main
            }
            let identity = naming.identity(of: key)
            // The key's items before this save: all of them are older than the one it creates.
            let before = try call.search(identity)
            if !before.locked(in: main).isEmpty || !before.locked(in: session).isEmpty { throw .locked }
            // An unlocked item of the key proves its collection unlocked; else ask.
            if before.unlocked(in: main).isEmpty { try call.requireUnlocked(main) }
            if target == session, before.unlocked(in: session).isEmpty { try call.requireUnlocked(session) }
            let mine = try call.createItem(
                in: target, attributes: naming.attributes(of: key, options: options, expiresAt: expiresAt),
                label: key.displayLabel, value: value)
            if let expiresAt { notePending(expiry: expiresAt) }
            // Replace the key's previous value. Items that existed before the create go; items a
            // concurrent save of the same key created meanwhile go only when older than ours
            // (in the same collection; in the other one when not modified later), so that two
            // processes saving the same key at once keep the newer item, not neither.
            let existing = Set(before.unlocked)
            let after = try call.search(identity)
            var concurrent: [(path: String, sameCollection: Bool)] = []
            for (collection, sameCollection) in [(target, true), (target == main ? session : main, false)] {
                for path in after.unlocked(in: collection) where path != mine {
                    if existing.contains(path) {
                        _ = try call.delete(path)
                    } else {
                        concurrent.append((path, sameCollection))
                    }
                }
            }
            if !concurrent.isEmpty, let created = try call.info(mine) {
                for (path, sameCollection) in concurrent {
                    guard let other = try call.info(path) else { continue }
                    if sameCollection ? other.order < created.order : other.modified <= created.modified {
                        _ = try call.delete(path)
                    }
                }
            }
            try purgeExpiredIfDue(call, now: now)
        }
    }

    /// The value of the key's newest item: an ephemeral one first, else a persistent one.
    /// Throws `expired` (and purges it) past an ephemeral credential's time to live, `locked`
    /// when the default collection is locked (never `nil` for a credential it cannot see).
    ///
    /// Round trips for a persistent credential: `SearchItems` and `GetSecrets`, like a bare
    /// libsecret lookup (an ephemeral one adds its item's `Properties.GetAll`, for its expiry).
    public func load(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try key.validate()
        let now = configuration.clock.now()
        return try perform { (call) throws(CredentialVaultError) -> Data? in
            guard let found = try unexpiredNewest(call, key, now: now) else { return nil }
            if let value = try call.secrets([found.path])[found.path] { return value }
            // Left out of the answer: deleted meanwhile, or its collection was locked meanwhile.
            try call.requireUnlocked(found.collection)
            return nil
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
            guard let found = try unexpiredNewest(call, key, now: now) else { return nil }
            var values = try call.secrets([found.path])
            guard var value = values.removeValue(forKey: found.path) else {
                try call.requireUnlocked(found.collection)
                return nil
            }
            let removed: Bool
            do throws(CredentialVaultError) {
                removed = try call.delete(found.path)
            } catch {
                wipe(&value)
                throw error
            }
            guard removed else {
                // Someone else took (or deleted) it between our read and our delete.
                wipe(&value)
                return nil
            }
            for item in found.all where item != found.path { _ = try call.delete(item) }
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
            let main = try call.collectionPath(.default)
            let session = try call.collectionPath(.session)
            let found = try call.search(naming.identity(of: key))
            if !found.locked(in: main).isEmpty || !found.locked(in: session).isEmpty { throw .locked }
            if found.unlocked(in: main).isEmpty { try call.requireUnlocked(main) }
            if found.unlocked(in: session).isEmpty { try call.requireUnlocked(session) }
            var deleted = false
            for item in found.unlocked(in: session) + found.unlocked(in: main) where try call.delete(item) {
                deleted = true
            }
            try purgeExpiredIfDue(call, now: now)
            return deleted
        }
    }

    /// The keys of the default collection's items that have `service` and `username`
    /// attributes (under the configured prefix), of one service when given, sorted by service
    /// then account. Ephemeral credentials are never listed; expired ones are purged on the way.
    public func listKeys(service: String?) throws(CredentialVaultError) -> [CredentialKey] {
        let now = configuration.clock.now()
        return try perform { (call) throws(CredentialVaultError) -> [CredentialKey] in
            let main = try call.collectionPath(.default)
            try call.requireUnlocked(main)
            try purgeExpiredIfDue(call, now: now)
            guard let main else { return [] }
            let found = try call.search(naming.scope(service: service))
            if !found.locked(in: main).isEmpty { throw .locked }
            var newestByKey: [CredentialKey: StoredCredential] = [:]
            for item in try call.infos(found.unlocked(in: main)) {
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
            if found.isExpired(at: now) {
                for item in found.all { _ = try call.delete(item) }
                return nil
            }
            if let credential = found.credential { return credential.metadata }
            guard let item = try call.info(found.path) else { return nil }
            return StoredCredential(item, naming: naming, inSession: false)?.metadata
        }
    }

    /// Deletes every credential of this store (of one service when given), ephemeral ones
    /// included, and returns how many keys were deleted. Without a `serviceNamePrefix` that is
    /// every item of the default collection with `service` and `username` attributes, whoever
    /// wrote it. Throws `locked` when the default collection is locked, before deleting anything.
    @discardableResult
    public func deleteAll(service: String?) throws(CredentialVaultError) -> Int {
        try perform { (call) throws(CredentialVaultError) -> Int in
            let main = try call.collectionPath(.default)
            let session = try call.collectionPath(.session)
            try call.requireUnlocked(main)
            try call.requireUnlocked(session)
            let found = try call.search(naming.scope(service: service))
            var deleted = Set<CredentialKey>()
            for (paths, inSession) in [(found.unlocked(in: session), true), (found.unlocked(in: main), false)] {
                for item in try call.infos(paths) {
                    guard let credential = StoredCredential(item, naming: naming, inSession: inSession) else { continue }
                    if try call.delete(item.objectPath) { deleted.insert(credential.key) }
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
            guard let main = try call.collectionPath(.default) else {
                throw .notAvailable("the Secret Service has no default collection (keyring)")
            }
            let info = try call.collectionInfo(main)
            return SecretServiceStatus(isLocked: info.isLocked, collectionLabel: info.label, collectionPath: main)
        }
    }

    // MARK: - Helpers

    /// Runs `body` with a call whose deadline starts now. When a remembered alias turned out to
    /// name a collection that is gone (the user deleted or replaced the keyring), the aliases
    /// are read again and `body` runs once more, within the same deadline (`body` finds that
    /// out before it changes anything).
    func perform<T>(_ body: (ServiceCall) throws(CredentialVaultError) -> T) throws(CredentialVaultError) -> T {
        let deadline = Deadline(configuration.timeout)
        defer { deadline.finish() }
        var retried = false
        while true {
            let call = try ServiceCall(connection: connection, deadline: deadline)
            do {
                return try body(call)
            } catch {
                guard call.foundStaleAlias, !retried else { throw error }
                retried = true
            }
        }
    }

    /// The key's newest item, as `newest(_:_:)` finds it.
    private struct Newest {
        /// Its path.
        let path: String
        /// The path of its collection.
        let collection: String
        /// What it records; `nil` for a lone persistent item, whose properties are not read
        /// (`load` and `take` need none: only ephemeral items expire).
        let credential: StoredCredential?
        /// The paths of all the key's items in that collection (it included).
        let all: [String]

        func isExpired(at now: Date) -> Bool { credential?.isExpired(at: now) ?? false }
    }

    /// The key's newest item (ephemeral first, then persistent) and all its items in that
    /// collection, from one `Service.SearchItems`, which lists unlocked and locked items apart:
    /// a locked item of the key throws `locked`, and when no unlocked item is found the
    /// collections' `Locked` properties are asked, so that a locked collection is never
    /// reported as a missing credential.
    /// The key's newest item; past an ephemeral credential's time to live, its items are
    /// purged and `expired` is thrown.
    private func unexpiredNewest(_ call: ServiceCall, _ key: CredentialKey, now: Date) throws(CredentialVaultError) -> Newest? {
        guard let found = try newest(call, key) else { return nil }
        if found.isExpired(at: now) {
            for item in found.all { _ = try call.delete(item) }
            throw .expired
        }
        return found
    }

    private func newest(_ call: ServiceCall, _ key: CredentialKey) throws(CredentialVaultError) -> Newest? {
        let main = try call.collectionPath(.default)
        let session = try call.collectionPath(.session)
        let found = try call.search(naming.identity(of: key))
        if !found.locked(in: session).isEmpty { throw .locked }
        let inSession = found.unlocked(in: session)
        if let session, !inSession.isEmpty {
            let items = try call.infos(inSession)
            if let best = items.max(by: { $0.order < $1.order }),
                let credential = StoredCredential(best, naming: naming, inSession: true)
            {
                return Newest(path: best.objectPath, collection: session, credential: credential, all: items.map(\.objectPath))
            }
        }
        if !found.locked(in: main).isEmpty { throw .locked }
        let inMain = found.unlocked(in: main)
        guard let main, !inMain.isEmpty else {
            // Nothing readable: make sure that is not because a collection is locked.
            try call.requireUnlocked(main)
            if inSession.isEmpty { try call.requireUnlocked(session) }
            return nil
        }
        if inMain.count == 1 { return Newest(path: inMain[0], collection: main, credential: nil, all: inMain) }
        // Several items (a save interrupted between its create and its delete, or racing
        // saves): the newest by the daemon's times, the same choice in every process.
        let items = try call.infos(inMain)
        guard let best = items.max(by: { $0.order < $1.order }),
            let credential = StoredCredential(best, naming: naming, inSession: false)
        else { return nil }
        return Newest(path: best.objectPath, collection: main, credential: credential, all: items.map(\.objectPath))
    }

    /// How often a store looks for expired ephemeral items it did not write itself (those of
    /// other processes, or of an earlier run of this one).
    static let sweepInterval: Duration = .seconds(60)
    /// When this process last looked through the session collection for expired items.
    private static let lastSweep = Mutex<ContinuousClock.Instant?>(nil)

    /// Remembers that this store wrote an ephemeral item expiring at `expiry`.
    private func notePending(expiry: Date) {
        pendingExpiry.withLock { $0 = min($0 ?? expiry, expiry) }
    }

    /// Deletes the expired ephemeral items of the session collection (those of every store:
    /// they are dead anyway), when it is worth a look: an ephemeral item this store wrote has
    /// expired by its clock, or this process has not looked for a minute (`sweepInterval`;
    /// the first write of a process always looks). Expired items nobody purged are also
    /// purged by the `load`, `take` or `metadata` that finds them, and are never listed.
    private func purgeExpiredIfDue(_ call: ServiceCall, now: Date) throws(CredentialVaultError) {
        let mineExpired = pendingExpiry.withLock { $0.map { $0 <= now } ?? false }
        let sweepDue = Self.lastSweep.withLock { last in last.map { $0.duration(to: .now) >= Self.sweepInterval } ?? true }
        guard mineExpired || sweepDue else { return }
        guard let session = try call.collectionPath(.session),
            let paths = try call.search(in: session, [ItemAttribute.accessibility: ItemAttribute.deviceOnly])
        else { return }
        var next: Date?
        for item in try call.infos(paths) {
            guard let expiry = ExpiryStamp.decode(item.attributes[ItemAttribute.expires]) else { continue }
            if expiry <= now {
                _ = try call.delete(item.objectPath)
            } else {
                next = min(next ?? expiry, expiry)
            }
        }
        // Items saved while this ran are in `next` or still noted as pending (kept if earlier).
        pendingExpiry.withLock { pending in
            let stillPending = pending.flatMap { $0 > now ? $0 : nil }
            pending = [stillPending, next].compactMap { $0 }.min()
        }
        Self.lastSweep.withLock { $0 = .now }
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
