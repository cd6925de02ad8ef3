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
/// with nothing). Nothing here ever asks for a password: only `unlockInteractively()` may (a
/// provider that answers a write with a prompt gets it dismissed, and the write gives `locked`).
///
/// **Replacing and taking.** A persistent `save` sends `SearchItems` for the key and
/// `CreateItem` with *replace* together: the daemon overwrites in place the default
/// collection's item with the same attributes (keeping its object path: one keyring write), or
/// makes one. The key's other items the search listed (another accessibility; items of
/// `secret-tool` or Python `keyring`, which the replace does not match; an ephemeral one in
/// `session`; duplicates left by older versions of this library) are then deleted, so exactly
/// one item is left; the deletes cost nothing when there are none, the usual case. A crash
/// before them leaves several items, of which readers take the newest (by the daemon's
/// modification time, then creation time, then the order it created them: the written item,
/// unless another was written within the same second) and the next save removes the others.
/// An ephemeral `save` writes a new item in `session` (its expiry attribute never matches an
/// older one's) and deletes the key's older items.
///
/// `take` reads the newest item and deletes it, and returns the value only when its own delete
/// removed that item: of several callers racing for one value, at most one gets it. The Secret
/// Service has no atomic read-and-delete, and a replaced item keeps its path, so a save landing
/// between a taker's read and its delete would be deleted along with the old value. Hence a
/// lock: `save` and `take` hold the key's lock file (`KeyLock`: one of 64 files in
/// `$XDG_RUNTIME_DIR/credential-vault/`, chosen by a hash of the key, held with `flock`) around
/// their D-Bus calls. Among CredentialVault users (threads, and processes of the user that see
/// the same `XDG_RUNTIME_DIR`) the saves and takes of one key thus run one after the other, and
/// a save racing a take is either what the take returns or still stored after it. A wait for
/// the lock ends at the operation's deadline with `busy`. `load`, `metadata`, `listKeys`,
/// `delete` and `deleteAll` take no lock (a delete removes whatever it finds, which is right in
/// either order with a save). Writers that do not take the lock are not excluded: `secret-tool
/// store` and Python `keyring` replace in place themselves, and CredentialVault versions before
/// the lock saved without it, so a `take` racing one of them can delete the value it wrote, as a
/// take racing those tools always could.
///
/// **Cost.** The connection to the service is made on first use and kept for the process
/// lifetime, with the collection paths behind the `default` and `session` aliases. Every call
/// is one D-Bus round trip on object paths (no proxy per collection or item): a `load` is
/// `SearchItems` + `GetSecrets` like a bare libsecret lookup; a persistent `save` is
/// `SearchItems` and `CreateItem` sent back to back (`Pipeline`: about one round trip), one
/// keyring write like a bare `secret_service_store_sync` (one `CreateItem` with replace), plus
/// the lock file's open, `flock` and close (no D-Bus). The lock state comes from the search's
/// list of locked items, from the collection when nothing matched, or, for a persistent
/// `save`, from the create's own answer. An unscoped store (`ApplicationIdentifier.credvault`)
/// sends a second search with the search of a key (for the items it marked) and reads the
/// attributes of the others it finds, to skip applications' items (`CredentialNaming.search`).
/// Expired ephemeral items are swept when one this store
/// wrote has expired, else at most once a minute per process.
/// Thread-safe: every instance may be used from any thread. The async API (`AsyncTokenStorageAdapter`)
/// runs these same operations on threads the store owns and is cancellable (see
/// `SecretServiceStore+Async.swift`).
public final class SecretServiceStore: TokenStorageAdapter {
    /// The store's configuration.
    public let configuration: SecretServiceConfiguration
    private let connection: ServiceConnection
    let naming: CredentialNaming
    /// Seams for tests: a fault injected into reads, a hook on prompt waits (`StoreTestHooks`; never set otherwise).
    let hooks = StoreTestHooks()
    /// The earliest expiry of the ephemeral items this store wrote and has not purged yet
    /// (by `configuration.clock`).
    private let pendingExpiry = Mutex<Date?>(nil)
    /// The threads the async API runs this store's operations on (`SecretServiceStore+Async.swift`);
    /// started on the first async call, so a store used only synchronously never has one.
    let threads = StoreThreads(name: "credvault-secrets", limit: SecretServiceStore.threadLimit)

    /// Creates a store. It connects on first use, so creating one never fails; `status()`
    /// tells whether the service is there and unlocked.
    public init(configuration: SecretServiceConfiguration = SecretServiceConfiguration()) {
        self.configuration = configuration
        connection = ServiceConnection.on(configuration.busAddress)
        naming = CredentialNaming(prefix: configuration.serviceNamePrefix, application: configuration.application.secretServiceScope)
    }

    /// The service of the string conveniences (`configuration.defaultService`).
    public var defaultService: String { configuration.defaultService }

    /// Persistent, device-only and portable, ephemeral where the provider has a `session`
    /// collection (gnome-keyring has; KeePassXC and KWallet have none), and safe for several
    /// processes at once (the daemon serialises every change, and the saves and takes of one
    /// key hold its lock file).
    ///
    /// Answered without asking the service: the ephemeral capability is the provider's once
    /// this process has talked to it (any operation, or `status()`, which `credvault info`
    /// calls first); before that it is what the Secret Service API offers (ephemeral included).
    public var capabilities: BackendCapabilities {
        var capabilities = Self.apiCapabilities
        capabilities.supportsEphemeral = connection.current?.hasSessionCollection ?? true
        return capabilities
    }

    /// What the Secret Service API offers, whatever the provider.
    static let apiCapabilities = BackendCapabilities(
        isPersistent: true, supportsDeviceOnly: true, supportsPortable: true, supportsEphemeral: true, isCrossProcessSafe: true)

    // MARK: - TokenStorageAdapter

    /// Stores `value` under `key`: in the default collection (persistent) or the `session`
    /// collection (ephemeral), replacing the key's item and deleting its other items (see
    /// "Replacing and taking"). Throws `locked` when the default collection is locked (also for
    /// an ephemeral credential: an older persistent value under the same key could not be
    /// removed), `notAvailable` when there is no default collection (a persistent credential) or
    /// no service, `busy` when the key's lock stays held past the deadline, `unsupported`
    /// (nothing stored) for a name the provider cannot store exactly (on KeePassXC, a service or
    /// account ending in a line feed: see `SecretServiceProvider.refusal(toStore:)`).
    ///
    /// A persistent credential is written before the search's answer is read: when that answer
    /// shows an older ephemeral item of the key in a locked `session` collection, `locked` is
    /// thrown with the new value stored but that item (which `load` would read first) left.
    ///
    /// Round trips of a persistent credential: `SearchItems` and `CreateItem` with replace, sent
    /// together (about one round trip), plus one `Item.Delete` per other item of the key. Of an
    /// ephemeral one: `SearchItems`, `Properties.Get(Locked)` of each collection that no item of
    /// the key proved unlocked, `CreateItem` and one `Item.Delete` per older item.
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) throws(CredentialVaultError) {
        try key.validate()
        // The provider's own lack of a session collection is reported below, naming it.
        try Self.apiCapabilities.check(options)
        let now = configuration.clock.now()
        let expiresAt = ExpiryStamp.expiry(of: options.lifetime, savedAt: now)
        let attributes = naming.attributes(of: key, options: options, expiresAt: expiresAt)
        try perform(locking: key) { (call) throws(CredentialVaultError) in
            // Before anything is written: a name the provider would match as another name.
            if let refusal = call.service.provider.refusal(toStore: key) { throw refusal }
            let main = try call.collectionPath(.default)
            let session = try call.collectionPath(.session)
            // The key's items before this save, and the one it wrote. Under the lock no other
            // CredentialVault save or take of the key runs until this one returns.
            var before: ServiceCall.Found
            let mine: String
            if let expiresAt {
                guard let session else { throw call.noSessionCollection() }
                before = try naming.search(call, key)
                try call.requireNoLocked(before, in: main, session)
                // An unlocked item of the key proves its collection unlocked; else ask, before
                // writing anything (an older persistent value must be removable).
                if before.unlocked(in: main).isEmpty { try call.requireUnlocked(main) }
                if before.unlocked(in: session).isEmpty { try call.requireUnlocked(session) }
                // A new item: its expiry attribute differs from any older one's, so a replace
                // would never match.
                mine = try call.createItem(in: session, attributes: attributes, label: key.displayLabel, value: value)
                notePending(expiry: expiresAt)
            } else {
                guard let main else { throw call.noDefaultCollection() }
                // One keyring write when the key's item has these attributes. A locked default
                // collection makes the create fail (`locked`), so nothing is written then.
                (before, mine) = try call.searchAndReplace(
                    naming.identity(of: key), in: main, attributes: attributes, label: key.displayLabel, value: value)
                before = try naming.owned(before, call, besides: [mine])
                // Only an older ephemeral value can be behind a lock here (the value is written).
                try call.requireNoLocked(before, in: main, session)
            }
            // The key's other items: another accessibility, other tools' items, the other
            // collection, duplicates. Usually none.
            for path in before.unlocked(in: main) + before.unlocked(in: session) where path != mine {
                _ = try call.delete(path)
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
            // Left out of the answer: deleted meanwhile (nil), locked meanwhile, or unreadable.
            try call.missingSecret(found.path, in: found.collection)
            return nil
        }
    }

    /// Reads the key's newest item and deletes it, holding the key's lock; the value is returned
    /// only when this call's delete removed that item, so of several callers racing for one
    /// value at most one gets it, and a CredentialVault `save` racing it is never lost (see
    /// "Replacing and taking"). Older duplicates are deleted too. Throws `expired` past an
    /// ephemeral credential's time to live (after purging it), `busy` when the key's lock stays
    /// held past the deadline.
    public func take(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try key.validate()
        let now = configuration.clock.now()
        return try perform(locking: key) { (call) throws(CredentialVaultError) -> Data? in
            guard let found = try unexpiredNewest(call, key, now: now) else { return nil }
            var values = try call.secrets([found.path])
            guard var value = values.removeValue(forKey: found.path) else {
                try call.missingSecret(found.path, in: found.collection)
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
            let found = try naming.search(call, key)
            try call.requireNoLocked(found, in: main, session)
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
            // The collection is unlocked: items still locked are a provider's per-program access
            // confirmation (KeePassXC), which guards their secrets, not their attributes.
            var newestByKey: [CredentialKey: StoredCredential] = [:]
            for item in try call.infos(found.unlocked(in: main) + found.locked(in: main)) {
                guard let credential = StoredCredential(item, naming: naming, inSession: false) else { continue }
                if let known = newestByKey[credential.key], !(known.item.order < item.order) { continue }
                newestByKey[credential.key] = credential
            }
            return newestByKey.values.map(\.key).sorted(by: CredentialKey.storageOrder)
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
            try call.requireNoLocked(found, in: main, session)
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

    /// Whether the Secret Service is reachable and its default collection unlocked, where it
    /// stores, which program serves it and whether it keeps ephemeral credentials. Never
    /// prompts a person (the collection KWallet reports locked at every login, whose unlock
    /// needs nobody while the wallet is open, is unlocked on the way). Throws
    /// `notAvailable` (no session bus, no Secret Service, or no default collection) or `timedOut`.
    public func status() throws(CredentialVaultError) -> SecretServiceStatus {
        switch try probe() {
        case .status(let status): return status
        case .noDefaultCollection(let error): throw error
        }
    }

    /// What `status()` finds, telling a provider without a default collection apart (for the
    /// resolver: that is a provider, not "no provider").
    enum Probe: Sendable {
        case status(SecretServiceStatus)
        /// The provider answers but has no default collection (`notAvailable`, with advice).
        case noDefaultCollection(CredentialVaultError)
    }

    /// See `Probe`.
    func probe() throws(CredentialVaultError) -> Probe {
        try perform { (call) throws(CredentialVaultError) -> Probe in
            let session = try call.collectionPath(.session)
            guard let main = try call.collectionPath(.default) else { return .noDefaultCollection(call.noDefaultCollection()) }
            var info = try call.collectionInfo(main)
            // KWallet reports its collection locked at every login until a client unlocks it,
            // which needs nobody while the wallet is open: not a locked keyring.
            if info.isLocked, try call.opensWithoutPerson(main) {
                try call.unlock([main], for: .unlockCollection)
                info = try call.collectionInfo(main)
            }
            // KeePassXC's collections have no label: the database's name is the path's last part.
            let label = info.label.isEmpty ? String(main.split(separator: "/").last ?? "") : info.label
            return .status(
                SecretServiceStatus(
                    isLocked: info.isLocked, collectionLabel: label, collectionPath: main, provider: call.service.provider,
                    supportsEphemeral: session != nil))
        }
    }

    // MARK: - Helpers

    /// Runs `body` with a call whose deadline starts now; with `key`, holding that key's
    /// `KeyLock` (taken once connected, so that a missing service is reported as such first,
    /// and waited for until the deadline at most: `busy`). `body` runs again, within the same
    /// deadline, once per `ServiceCall.Rerun`: when a remembered alias turned out to name a
    /// collection that is gone (the user deleted or replaced the keyring: the aliases are read
    /// again), when something locked was unlocked (`lockedFound`), and when a secret could not
    /// be decrypted (a new session). `body` finds these out before it changes anything.
    ///
    /// On a store thread (the async API), cancelling the waiting task cancels the calls in
    /// flight and the lock wait: `cancelled` (see `SecretServiceStore+Async.swift`).
    func perform<T>(
        locking key: CredentialKey? = nil, _ body: (ServiceCall) throws(CredentialVaultError) -> T
    ) throws(CredentialVaultError) -> T {
        let deadline = Deadline(configuration.timeout)
        defer { deadline.finish() }
        CancellationFlag.current?.onCancel { deadline.cancel() }
        do throws(CredentialVaultError) {
            return try perform(locking: key, deadline: deadline, body)
        } catch {
            let settled = deadline.settle(error)
            report(settled)
            throw settled
        }
    }

    private func perform<T>(
        locking key: CredentialKey?, deadline: Deadline, _ body: (ServiceCall) throws(CredentialVaultError) -> T
    ) throws(CredentialVaultError) -> T {
        var lock: FileLock?
        defer { lock?.release() }
        var earlier = Set<ServiceCall.Rerun>()
        let policy = ServiceCall.Policy(
            allowsInteraction: configuration.allowsInteraction, interactionTimeout: configuration.interactiveUnlockTimeout,
            logger: configuration.logger, metrics: configuration.metrics)
        while true {
            let known = connection.current
            let call = try ServiceCall(connection: connection, deadline: deadline, policy: policy, earlier: earlier, hooks: hooks)
            if call.service !== known { reportConnected(call.service) }
            if let key, lock == nil {
                lock = try KeyLock.acquire(service: naming.storedService(key.service), account: key.account, until: deadline.end)
            }
            do {
                return try body(call)
            } catch {
                guard let rerun = call.rerun, !earlier.contains(rerun) else { throw error }
                reportRerun(rerun)
                earlier.insert(rerun)
            }
        }
    }

    /// The key's newest item, as `newest(_:_:)` finds it.
    struct Newest {
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
    func unexpiredNewest(_ call: ServiceCall, _ key: CredentialKey, now: Date) throws(CredentialVaultError) -> Newest? {
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
        let found = try naming.search(call, key)
        try call.requireNoLocked(found, in: session)
        let inSession = found.unlocked(in: session)
        if let session, !inSession.isEmpty {
            let items = try call.infos(inSession)
            if let best = items.max(by: { $0.order < $1.order }),
                let credential = StoredCredential(best, naming: naming, inSession: true)
            {
                return Newest(path: best.objectPath, collection: session, credential: credential, all: items.map(\.objectPath))
            }
        }
        try call.requireNoLocked(found, in: main)
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

    /// Deletes the expired ephemeral items of the session collection that belong to this store
    /// (its application and prefix), when it is worth a look: an ephemeral item this store wrote has
    /// expired by its clock, or this process has not looked for a minute (`sweepInterval`;
    /// the first write of a process always looks). Expired items nobody purged are also
    /// purged by the `load`, `take` or `metadata` that finds them, and are never listed.
    private func purgeExpiredIfDue(_ call: ServiceCall, now: Date) throws(CredentialVaultError) {
        let mineExpired = pendingExpiry.withLock { $0.map { $0 <= now } ?? false }
        let sweepDue = Self.lastSweep.withLock { last in last.map { $0.duration(to: .now) >= Self.sweepInterval } ?? true }
        guard mineExpired || sweepDue else { return }
        // Only this store's own items (its namespace and service-name prefix): another
        // application's are its own to judge, by its own clock.
        var scope = naming.scope(service: nil)
        scope[ItemAttribute.accessibility] = ItemAttribute.deviceOnly
        guard let session = try call.collectionPath(.session), let paths = try call.search(in: session, scope) else { return }
        var next: Date?
        for item in try call.infos(paths) {
            guard naming.owns(item.attributes), StoredCredential(item, naming: naming, inSession: true) != nil,
                let expiry = ExpiryStamp.decode(item.attributes[ItemAttribute.expires])
            else { continue }
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
}

/// Overwrites a copy of a secret that is about to be dropped (`sodium_memzero`, which the
/// compiler may not optimise away).
func wipe(_ data: inout Data) {
    data.withUnsafeMutableBytes { buffer in
        if let base = buffer.baseAddress, buffer.count > 0 { sodium_memzero(base, buffer.count) }
    }
}
