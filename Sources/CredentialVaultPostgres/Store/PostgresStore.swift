import CredentialVault
import Foundation
import Logging

/// The fleet store: credentials shared by a fleet of hosts through a PostgreSQL database that
/// holds only ciphertext (docs/FLEET.md).
///
/// - Every row is sealed on the client with the store's data key (XChaCha20-Poly1305; the
///   associated data binds the store id, the record id and the row version) and found by a
///   keyed hash of its name: the database sees no service, account, label or value.
/// - The data key is wrapped once per host secret (`FleetHostSecret`: a key file, a passphrase,
///   a key pair or the device's).
/// - Every write is a compare-and-swap on the row version; `take` is single use across hosts.
/// - Every write and delete is bound to the data key's epoch in the same statement: a process
///   that opened the store before a rotation gets `reopenRequired(.keyChanged)`, never a lost write or a
///   false "not found".
/// - A store-wide generation, sealed with the data key and advanced by every write in its
///   statement, is checked by every read, and each host remembers the newest state it has
///   seen: rows changed without the key are `tampered`, an older copy of the database put back
///   is `rolledBack` (`acceptRestore` after a deliberate restore).
/// - Reads are served from a per-process cache while the store-wide generation is known to be
///   unchanged (checked at most `freshnessInterval` ago).
/// - `withExclusiveAccess` is a fleet-wide lock (a PostgreSQL advisory lock, released when its
///   holder's connection ends).
///
/// Device-only credentials are refused (`unsupported`): a shared store is not one device.
/// Ephemeral ones work fleet-wide (their TTL, a single-use `take` on any host, purged).
///
/// The synchronous API blocks the calling thread for its round trips (as every synchronous
/// backend does); the asynchronous API runs them on threads the store owns and answers cached
/// reads on the caller's thread. A task cancelled while its operation waits for a thread gets
/// `cancelled` having done nothing; one already sent completes (each is one short statement,
/// bounded by the statement timeout).
public final class PostgresStore: Sendable {
    /// What this store can honour: persistent, portable and ephemeral credentials, across
    /// processes and hosts; not device-only ones.
    public let capabilities = BackendCapabilities(
        isPersistent: true, supportsDeviceOnly: false, supportsPortable: true, supportsEphemeral: true, isCrossProcessSafe: true)

    /// The host name this store was opened as (its row in `fleet_hosts`).
    public let host: String

    let configuration: PostgresConfiguration
    let schema: FleetSchema
    let pool: ConnectionPool
    let keys: FleetKeys
    /// The newest state of the store this host has seen (refuses an older one: `rolledBack`).
    let memory: FleetMemory
    let cache: RecordCache
    /// The threads of the async API's round trips.
    let threads: StoreThreads
    /// The threads that wait for the fleet-wide lock (apart, so waits never hold up reads).
    let lockThreads: StoreThreads
    /// Expires the cache early on NOTIFY (a hint; `nil` without a cache).
    let listener: ChangeListener?

    init(configuration: PostgresConfiguration, host: String, pool: ConnectionPool, keys: FleetKeys, memory: FleetMemory) {
        self.configuration = configuration
        self.host = host
        schema = FleetSchema(name: configuration.schema)
        self.pool = pool
        self.keys = keys
        self.memory = memory
        cache = RecordCache(interval: configuration.freshnessInterval)
        threads = StoreThreads(name: "credvault-pg", limit: configuration.threads)
        lockThreads = StoreThreads(name: "credvault-pglock", limit: configuration.threads)
        listener =
            configuration.freshnessInterval > .zero && configuration.listensForChanges
            ? ChangeListener(configuration: configuration, channel: schema.channel, cache: cache) : nil
    }

    // Releasing the store writes out its memory of the store's state when it is behind (one
    // small file, replaced and synced): on the releasing thread, so a store released on
    // Swift's cooperative pool makes that write there once.
    deinit {
        listener?.stop()
        memory.flush()
    }

    /// The store's id (32 hex digits), the same on every host.
    public var storeID: String { keys.storeID.map { String(format: "%02x", $0) }.joined() }

    /// The data key's epoch (1, then one more per rotation).
    public var keyEpoch: Int64 { keys.keyEpoch }

    /// Opens the fleet store of `configuration` as `host`, unwrapping the data key with `key`.
    /// Blocks for the connect, two round trips (the read, the purge of expired rows) and (for a
    /// passphrase) one Argon2id run.
    ///
    /// The store's epoch and this host's wrapping are read in one statement (one snapshot); an
    /// open that a rotation overtakes before it is done (its first write, the purge of expired
    /// rows, sees the new epoch) opens again, so the store returned is current when returned.
    ///
    /// Throws `notAvailable` when the server cannot be reached or holds no store in the
    /// schema, `rolledBack` when the store's state is older than one this host has seen,
    /// `tampered` when its state seal does not match, `unsupported` for a store of another schema version (it is never migrated
    /// silently), `permissionDenied` when the host is not enrolled or the server refuses the
    /// role, `wrongPassphrase` when `key` is not this host's, `invalidArgument` for a
    /// malformed connection string (never repeated: it may hold a password).
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public static func open(
        _ configuration: PostgresConfiguration, host: String, secret key: FleetHostSecret
    ) throws(CredentialVaultError) -> PostgresStore {
        try open(configuration, host: host, secret: key, acceptingRestore: false)
    }

    /// Opens the store as `open` does, but accepts its state even when this host has seen a
    /// newer one, and remembers it instead: after a deliberate restore of the database from a
    /// backup (`credvault fleet accept-restore`). Everything else is checked as by `open`: a data
    /// key of the epoch this host knew, or of a later one, must be that key or signed from it
    /// (`tampered` otherwise); one of an older epoch cannot be checked and is believed.
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public static func acceptRestore(
        _ configuration: PostgresConfiguration, host: String, secret key: FleetHostSecret
    ) throws(CredentialVaultError) -> PostgresStore {
        try open(configuration, host: host, secret: key, acceptingRestore: true)
    }

    static func open(
        _ configuration: PostgresConfiguration, host: String, secret key: FleetHostSecret, acceptingRestore: Bool
    ) throws(CredentialVaultError) -> PostgresStore {
        do { return try opening(configuration, host: host, secret: key, acceptingRestore: acceptingRestore) } catch {
            report(error, configuration)
            throw error
        }
    }

    /// `open`'s work; the failures an operator must hear of are reported by `open`.
    private static func opening(
        _ configuration: PostgresConfiguration, host: String, secret key: FleetHostSecret, acceptingRestore: Bool
    ) throws(CredentialVaultError) -> PostgresStore {
        try configuration.validate()
        try validateHostName(host)
        let pool = ConnectionPool(configuration: configuration)
        let schema = FleetSchema(name: configuration.schema)
        var attempt = 1
        while true {
            let (keys, state, chain) = try unwrapKeys(pool: pool, schema: schema, host: host, secret: key)
            let memory = try FleetMemory(directory: configuration.stateDirectory, storeID: keys.storeID)
            // The key is checked even for an accepted restore: a restore brings back an older
            // state, not another key for an epoch this host knew (a box sealed to it by the
            // administrator). A key of an older epoch than the one known cannot be checked.
            try checkKey(keys, chain: chain, memory: memory)
            if !acceptingRestore { try verify(state, keys: keys, memory: memory, force: true) }
            let store = PostgresStore(configuration: configuration, host: host, pool: pool, keys: keys, memory: memory)
            do throws(CredentialVaultError) {
                if acceptingRestore { try store.accept(state) }
                try store.purgeExpired()
                return store
            } catch {
                // Rotated between the read and the purge: read the new epoch and wrapping.
                guard error == .reopenRequired(.keyChanged), attempt < openAttempts else { throw error }
                attempt += 1
                configuration.metrics.fleetRetry("rotation")
                configuration.logger.info("the fleet store was rotated while it was being opened: reading it again", metadata: ["category": "fleet"])
            }
        }
    }

    /// How many times an open reads the store again when rotations keep overtaking it.
    static let openAttempts = 3

    /// Reads the store's meta row and `host`'s wrapping in one statement and unwraps the data
    /// key; returns the keys and the state read with them (to be verified).
    private static func unwrapKeys(
        pool: ConnectionPool, schema: FleetSchema, host: String, secret key: FleetHostSecret
    ) throws(CredentialVaultError) -> (FleetKeys, FleetState, chain: Data?) {
        let askedAt = ContinuousClock.now
        let result = try readMetaAndHost(pool: pool, schema: schema, host: host)
        guard result.rowCount == 1, let version = result.int8(0, 0), let storeID = result.bytes(0, 1), storeID.count == 16,
            let epoch = result.int8(0, 2)
        else { throw .corrupted("the fleet store's fleet_meta row is missing or malformed") }
        guard version == FleetSchema.version else {
            throw .unsupported(
                "the fleet store has schema version \(version); this CredentialVault reads version \(FleetSchema.version) only (never migrated silently: upgrade CredentialVault, or migrate explicitly)")
        }
        guard let source = result.int8(0, 3), let salt = result.bytes(0, 4), let ops = result.int8(0, 5), let mem = result.int8(0, 6),
            let hostEpoch = result.int8(0, 7), let wrapped = result.bytes(0, 8)
        else {
            throw .permissionDenied("host \(host) is not enrolled in this fleet store: run `credvault fleet add-host` on an enrolled host")
        }
        // Read in the same snapshot as the epoch: only a wrapping a rotation did not replace
        // (a host row put back by hand) can be of another epoch.
        guard hostEpoch == epoch else {
            throw .permissionDenied("host \(host)'s wrapping is of an older data key (rotated since): enrol it again")
        }
        let row = HostWrapping(host: host, source: source, salt: salt, opsLimit: ops, memLimit: mem, epoch: hostEpoch, wrapped: wrapped)
        let dataKey = try row.unwrap(key, storeID: storeID)
        let state = try FleetState(result, epoch: 2, generation: 9, seal: 10, askedAt: askedAt)
        return (try FleetKeys(dataKey: dataKey, storeID: storeID, keyEpoch: epoch), state, result.bytes(0, 11))
    }

    /// The open's statement. A store made before the state seal has no `state_seal` column
    /// (SQLSTATE 42703): it is added (the store owner's role can), and the statement read again.
    private static func readMetaAndHost(pool: ConnectionPool, schema: FleetSchema, host: String) throws(CredentialVaultError) -> PGResult {
        try pool.withConnection { (c: PGConnection) throws(PGFailure) -> PGResult in
            do throws(PGFailure) {
                return try c.queryUnprepared(schema.readMetaAndHost, [.text(host)], deadline: pool.statementDeadline)
            } catch {
                guard error.sqlState == "42703" else { throw error }
                try c.simple(schema.addStateSeal, deadline: pool.statementDeadline)
                return try c.queryUnprepared(schema.readMetaAndHost, [.text(host)], deadline: pool.statementDeadline)
            }
        }
    }

    /// Opens the store from async code: the connect, round trips and key derivation run on a
    /// thread of their own.
    public static func open(
        _ configuration: PostgresConfiguration, host: String, secret key: FleetHostSecret
    ) async throws(CredentialVaultError) -> PostgresStore {
        try await StoreThreads.detached(name: "credvault-pgopen") { _ throws(CredentialVaultError) in
            try open(configuration, host: host, secret: key)
        }
    }

    /// `acceptRestore` from async code, on a thread of its own as `open`.
    public static func acceptRestore(
        _ configuration: PostgresConfiguration, host: String, secret key: FleetHostSecret
    ) async throws(CredentialVaultError) -> PostgresStore {
        try await StoreThreads.detached(name: "credvault-pgopen") { _ throws(CredentialVaultError) in
            try acceptRestore(configuration, host: host, secret: key)
        }
    }

    /// `initialize` from async code, on a thread of its own as `open` (its key derivation and
    /// the transaction that creates the schema).
    public static func initialize(
        _ configuration: PostgresConfiguration, host: String, secret key: FleetHostSecret, kdf: KDFParameters = .moderate
    ) async throws(CredentialVaultError) -> PostgresStore {
        try await StoreThreads.detached(name: "credvault-pginit") { _ throws(CredentialVaultError) in
            try initialize(configuration, host: host, secret: key, kdf: kdf)
        }
    }

    /// Creates a new fleet store in the configuration's schema (which must not exist), with a
    /// random store id and data key, enrolling `host` with `key`, in one transaction; then
    /// opens it. `kdf` is the Argon2id cost of a passphrase host secret.
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public static func initialize(
        _ configuration: PostgresConfiguration, host: String, secret key: FleetHostSecret, kdf: KDFParameters = .moderate
    ) throws(CredentialVaultError) -> PostgresStore {
        try configuration.validate()
        try validateHostName(host)
        let pool = ConnectionPool(configuration: configuration)
        let schema = FleetSchema(name: configuration.schema)
        let storeID = Data(Crypto.randomBytes(16))
        let dataKey = SecureBytes.random(count: Crypto.keyBytes)
        let wrapping = try HostWrapping.make(host: host, secret: key, kdf: kdf, dataKey: dataKey, storeID: storeID, epoch: 1)
        let keys = try FleetKeys(dataKey: dataKey, storeID: storeID, keyEpoch: 1)
        let created = try pool.withConnection(retrySafe: false) { (c: PGConnection) throws(PGFailure) -> Bool in
            // (A deadline for each statement, from when it is sent, as everywhere.)
            do throws(PGFailure) {
                try c.simple("BEGIN; " + schema.creation, deadline: pool.statementDeadline)
                _ = try c.queryUnprepared(
                    schema.insertMeta, [.int8(FleetSchema.version), .bytes(storeID), .int8(1), .bytes(keys.stateSeal(generation: 0))],
                    deadline: pool.statementDeadline)
                _ = try c.queryUnprepared(schema.insertHost, wrapping.parameters, deadline: pool.statementDeadline)
                try c.simple("COMMIT", deadline: pool.statementDeadline)
                return true
            } catch {
                try? c.simple("ROLLBACK", deadline: pool.statementDeadline)
                // 42P06: the schema exists. 23505: another init's transaction, still open when
                // this one's CREATE SCHEMA arrived, committed it (the unique index of
                // pg_namespace): it exists just the same.
                if error.sqlState == "42P06" || error.sqlState == "23505" { return false }
                throw error
            }
        }
        guard created else {
            throw .alreadyExists("a fleet store (or another schema) named \(configuration.schema): open it, or pick another schema")
        }
        let memory = try FleetMemory(directory: configuration.stateDirectory, storeID: storeID)
        memory.remember(FleetMemory.KnownKey(epoch: 1, verifyKey: keys.verifyKey))
        try memory.observe(FleetMemory.Mark(epoch: 1, generation: 0), askedAt: .now, force: true)
        return PostgresStore(configuration: configuration, host: host, pool: pool, keys: keys, memory: memory)
    }

    /// Host names are 1 to 255 bytes without control characters.
    static func validateHostName(_ host: String) throws(CredentialVaultError) {
        guard (1...255).contains(host.utf8.count), !CredentialKey.hasControlCharacter(host) else {
            throw .invalidArgument("a fleet host name is 1 to 255 bytes without control characters")
        }
    }
}

extension HostWrapping {
    /// The parameters of `FleetSchema.insertHost`.
    var parameters: [PGParam] {
        [.text(host), .int8(source), .bytes(salt), .int8(opsLimit), .int8(memLimit), .int8(epoch), .bytes(wrapped)]
    }
}
