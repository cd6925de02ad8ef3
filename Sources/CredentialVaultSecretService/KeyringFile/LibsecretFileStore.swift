import CredentialVault
import Foundation

/// A credential store in libsecret's keyring file (`keyrings/default.keyring`), the file
/// libsecret's file backend and oo7 keep an application's secrets in when it runs in a Flatpak
/// (its key derived from the Secret portal's secret) or when told to (`SECRET_BACKEND=file`):
/// a Swift component and a GTK or Rust component of the same application, or an application
/// moving between libsecret and this library, see the same secrets. Opt-in: nothing chooses it
/// by itself.
///
/// **Items** are those the Secret Service backend writes (`SecretServiceStore`): the same
/// attributes (`service`, `username`, `xdg:schema`, `credential-vault:accessibility`,
/// `credential-vault:application`, and `credential-vault:expires` for ephemeral ones), label
/// and value, so that `secret-tool lookup service S username U` finds a credential wherever it
/// is kept. A search matches items whose attributes include the ones asked for, as libsecret's
/// does: an item oo7 wrote with our attributes plus `xdg:content-type` is found, replaced and
/// deleted like ours (libsecret's own replace needs the whole set equal, so a libsecret `store`
/// next to such an item adds a second one; readers here take the newest).
///
/// **Saving** replaces every item of the key in this store's namespace with one new item
/// (keeping the first one's creation time); **taking** reads and removes them in the same
/// write; **deleting** removes them. Each write holds the file's lock against other
/// CredentialVault writers and checks, just before its rename, that the file did not change
/// since it was read: a write of libsecret or oo7 that lands meanwhile is kept and the change
/// made again on top of it (`KeyringFile`). Reads take no lock (a rename is atomic).
///
/// **Device-only and ephemeral** as in the Secret Service backend: accessibility is an
/// attribute (items other tools wrote count as device-only); ephemeral credentials carry their
/// expiry, are never listed, throw `expired` past it (and are purged, as are all expired ones
/// at each write) and are consumed by `take`. Unlike the Secret Service's `session`
/// collection they are written to the file (encrypted, like every item). With a password key
/// source the file opens on any machine that has the password: device-only is then a label,
/// as it is for a keyring file copied elsewhere with its login password.
///
/// **Errors.** A key that opens no item of the file is `wrongPassphrase`; an item whose MAC or
/// attributes do not verify is `tampered`; a truncated or malformed file is `corrupted` (another
/// format version `unsupported`); nothing is written over a file that cannot be read. Another
/// CredentialVault writer holding the file past `lockTimeout`, or another program changing it
/// at every attempt, is `busy`.
///
/// Thread-safe; the async API runs these operations on library threads.
public final class LibsecretFileStore: TokenStorageAdapter {
    /// The store's configuration.
    public let configuration: LibsecretFileConfiguration
    let naming: CredentialNaming
    /// The file.
    let file: KeyringFile

    /// Creates a store over `configuration.path`; the file is read at each operation and made
    /// at the first write. Throws `invalidArgument` for a portal secret that is not 64 bytes or
    /// an empty password.
    public init(configuration: LibsecretFileConfiguration) throws(CredentialVaultError) {
        try configuration.keySource.validate()
        self.configuration = configuration
        naming = CredentialNaming(prefix: configuration.serviceNamePrefix, application: configuration.application.secretServiceScope)
        file = KeyringFile(path: configuration.path, secret: configuration.keySource.secret, lockTimeout: configuration.lockTimeout)
    }

    /// The service of the string conveniences (`configuration.defaultService`).
    public var defaultService: String { configuration.defaultService }

    /// Persistent, device-only, portable, ephemeral, and safe for several processes (see the type).
    public var capabilities: BackendCapabilities {
        BackendCapabilities(isPersistent: true, supportsDeviceOnly: true, supportsPortable: true, supportsEphemeral: true, isCrossProcessSafe: true)
    }

    /// Stores `value` under `key`, replacing the key's items (see the type). Throws
    /// `invalidArgument` for a value over 16 MiB, or when the file would grow past the 64 MiB
    /// a read accepts (nothing is written).
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) throws(CredentialVaultError) {
        try key.validate()
        try capabilities.check(options)
        guard value.count <= KeyringFileLayout.maximumSecretSize else {
            throw .invalidArgument("a credential in the keyring file holds at most \(KeyringFileLayout.maximumSecretSize) bytes")
        }
        let now = configuration.clock.now()
        let expiresAt = ExpiryStamp.expiry(of: options.lifetime, savedAt: now)
        let attributes = ServiceCall.withSchema(naming.attributes(of: key, options: options, expiresAt: expiresAt))
        let seconds = UInt64(max(0, now.timeIntervalSince1970))
        try file.update(now: now) { (keyring) throws(CredentialVaultError) -> (result: Void, changed: Bool) in
            var mine = try keyring.credentials(matching: naming.identity(of: key), naming: naming)
            defer { for index in mine.indices { mine[index].item.wipeSecret() } }
            let created = expiresAt == nil ? mine.filter { !$0.stored.isEphemeral }.map(\.item.created).min() ?? seconds : seconds
            keyring.remove(mine.flatMap(\.indices) + (try keyring.expired(at: now, naming: naming)))
            try keyring.append(KeyringItem(attributes: attributes, label: key.displayLabel, created: created, modified: seconds, secret: value))
            return ((), true)
        }
    }

    /// The value of the key's current item (an ephemeral one first, else the newest). Throws
    /// `expired` (and purges it) past an ephemeral credential's time to live.
    public func load(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try key.validate()
        let now = configuration.clock.now()
        guard var found = try readCurrent(key) else { return nil }
        if found.stored.isExpired(at: now) {
            found.item.wipeSecret()
            try purgeExpired(now: now)
            throw .expired
        }
        return found.item.secret
    }

    /// Reads the key's current item and removes all its items in one write, under the file's
    /// lock: of several takers only one gets the value. Throws `expired` (having purged it)
    /// past an ephemeral credential's time to live.
    public func take(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try key.validate()
        let now = configuration.clock.now()
        var taken = try file.update(now: now) { (keyring) throws(CredentialVaultError) -> (result: FileCredential?, changed: Bool) in
            let (current, all) = try current(of: key, in: keyring)
            guard let current else { return (nil, false) }
            let expired = try keyring.expired(at: now, naming: naming)
            // An expired value goes alone: a persistent item of the key that another program
            // stored beside it meanwhile is not taken with it (nor is it returned).
            keyring.remove(current.stored.isExpired(at: now) ? expired : all + expired)
            return (current, true)
        }
        guard taken?.stored.isExpired(at: now) == true else { return taken?.item.secret }
        taken?.item.wipeSecret()
        throw .expired
    }

    /// Removes every item of the key in this store's namespace; returns whether there was one.
    @discardableResult
    public func delete(_ key: CredentialKey) throws(CredentialVaultError) -> Bool {
        try key.validate()
        return try purge(key, now: configuration.clock.now())
    }

    /// The keys of the persistent credentials (of one service when given), sorted by service then
    /// account; ephemeral ones are never listed.
    public func listKeys(service: String?) throws(CredentialVaultError) -> [CredentialKey] {
        try file.read { (keyring) throws(CredentialVaultError) -> [CredentialKey] in
            guard let keyring else { return [] }
            var keys = Set<CredentialKey>()
            for var credential in try credentials(in: keyring, service: service) {
                credential.item.wipeSecret()
                if !credential.stored.isEphemeral { keys.insert(credential.stored.key) }
            }
            return keys.sorted(by: CredentialKey.storageOrder)
        }
    }

    /// What the key's current item records (dates in whole seconds); `nil` when missing or
    /// expired (then purged).
    public func metadata(for key: CredentialKey) throws(CredentialVaultError) -> CredentialMetadata? {
        try key.validate()
        let now = configuration.clock.now()
        guard var current = try readCurrent(key) else { return nil }
        current.item.wipeSecret()
        let found = current.stored
        guard !found.isExpired(at: now) else {
            try purgeExpired(now: now)
            return nil
        }
        return found.metadata
    }

    /// Removes every credential of this store's namespace (of one service when given),
    /// ephemeral ones included; returns how many keys were removed.
    @discardableResult
    public func deleteAll(service: String?) throws(CredentialVaultError) -> Int {
        try file.update(now: configuration.clock.now()) { (keyring) throws(CredentialVaultError) -> (result: Int, changed: Bool) in
            var doomed = try credentials(in: keyring, service: service)
            defer { for index in doomed.indices { doomed[index].item.wipeSecret() } }
            keyring.remove(doomed.flatMap(\.indices))
            return (Set(doomed.map(\.stored.key)).count, !doomed.isEmpty)
        }
    }

    /// For tests: `hook` runs in each write between its read of the file and its check before
    /// the rename, where another program's write would land.
    package func runBeforeReplacing(_ hook: (@Sendable () -> Void)?) {
        file.beforeReplacing.withLock { $0 = hook }
    }

    // MARK: - Helpers

    /// The key's current credential in the file as it is (see `current(of:in:)`).
    private func readCurrent(_ key: CredentialKey) throws(CredentialVaultError) -> FileCredential? {
        try file.read { (keyring) throws(CredentialVaultError) -> FileCredential? in
            guard let keyring else { return nil }
            return try current(of: key, in: keyring).current
        }
    }

    /// The key's current credential in `keyring` (`FileCredential.current`), its secret
    /// included (the other items' are wiped), and the indices of all the key's items.
    private func current(of key: CredentialKey, in keyring: OpenedKeyring) throws(CredentialVaultError) -> (current: FileCredential?, all: [Int]) {
        var mine = try keyring.credentials(matching: naming.identity(of: key), naming: naming)
        let current = FileCredential.current(of: mine)
        for index in mine.indices where mine[index].index != current?.index { mine[index].item.wipeSecret() }
        return (current, mine.flatMap(\.indices))
    }

    /// The credentials of this store (of one service when given): the items with `service` and
    /// `username` attributes in its scope, decrypted.
    private func credentials(in keyring: OpenedKeyring, service: String?) throws(CredentialVaultError) -> [FileCredential] {
        let candidates = try keyring.credentials(matching: naming.scope(service: service), naming: naming)
        return candidates.filter { $0.item.attributes[ItemAttribute.service] != nil && $0.item.attributes[ItemAttribute.account] != nil }
    }

    /// Removes this namespace's expired items (an expired value found by a read among them) and
    /// nothing else: the key's other items (a persistent one another program stored beside
    /// an ephemeral one) stay, as the Secret Service backend deletes only the expired ones.
    private func purgeExpired(now: Date) throws(CredentialVaultError) {
        try file.update(now: now) { (keyring) throws(CredentialVaultError) -> (result: Void, changed: Bool) in
            let expired = try keyring.expired(at: now, naming: naming)
            keyring.remove(expired)
            return ((), !expired.isEmpty)
        }
    }

    /// Removes the key's items and every expired one; whether the key had an item.
    @discardableResult
    private func purge(_ key: CredentialKey, now: Date) throws(CredentialVaultError) -> Bool {
        try file.update(now: now) { (keyring) throws(CredentialVaultError) -> (result: Bool, changed: Bool) in
            var mine = try keyring.credentials(matching: naming.identity(of: key), naming: naming)
            defer { for index in mine.indices { mine[index].item.wipeSecret() } }
            let expired = try keyring.expired(at: now, naming: naming)
            keyring.remove(mine.flatMap(\.indices) + expired)
            return (!mine.isEmpty, !mine.isEmpty || !expired.isEmpty)
        }
    }
}

/// The async API: each operation runs its blocking twin on a library thread (see
/// `AsyncTokenStorageAdapter`'s default implementations for blocking backends).
extension LibsecretFileStore: AsyncTokenStorageAdapter {}
