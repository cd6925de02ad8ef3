import CredentialVault
import Foundation
import Logging

/// One enrolled host, as `hosts()` lists it.
public struct FleetHost: Sendable, Hashable {
    /// The host's name.
    public let name: String
    /// `passphrase`, `key file` or `public key`.
    public let keyKind: String
    /// The data key epoch its wrapping is of.
    public let keyEpoch: Int64
}

/// What `status()` reports.
public struct FleetStatus: Sendable, Hashable {
    /// The store id (32 hex digits).
    public let storeID: String
    /// The schema version of the store.
    public let schemaVersion: Int64
    /// The data key epoch.
    public let keyEpoch: Int64
    /// The data key's fingerprint (`PostgresStore.keyFingerprint`).
    public let keyFingerprint: String
    /// The store-wide generation (one more per change of a record).
    public let generation: Int64
    /// How many rows (credentials, ephemeral ones included) the store holds.
    public let records: Int64
    /// The enrolled hosts.
    public let hosts: [FleetHost]
}

/// Enrolling and removing hosts, the status, and the data key's rotation.
extension PostgresStore {
    /// Enrols `name` with its own key: the data key is wrapped for it (no record is re-sealed).
    /// Throws `alreadyExists` when the host is enrolled already.
    public func addHost(_ name: String, secret key: FleetHostSecret, kdf: KDFParameters = .moderate) throws(CredentialVaultError) {
        try Self.validateHostName(name)
        try enrol(
            HostWrapping.make(host: name, secret: key, kdf: kdf, dataKey: keys.dataKey, storeID: keys.storeID, epoch: keys.keyEpoch))
    }

    /// Enrols `name` by its public key (32 bytes: `FleetHostSecret.publicKey(ofPrivateKeyFile:)`,
    /// `credvault fleet public-key` on that host): the data key is sealed to it, and every
    /// rotation seals the new one to it too. It opens the store with `.keyPair(its private key
    /// file)`. Throws `alreadyExists` when the host is enrolled already.
    public func addHost(_ name: String, publicKey: Data) throws(CredentialVaultError) {
        try Self.validateHostName(name)
        guard publicKey.count == Crypto.boxPublicKeyBytes else {
            throw .invalidArgument("a fleet host's public key is \(Crypto.boxPublicKeyBytes) bytes (64 hex digits)")
        }
        try enrol(
            HostWrapping.sealed(host: name, publicKey: Array(publicKey), dataKey: keys.dataKey, storeID: keys.storeID, epoch: keys.keyEpoch))
    }

    private func enrol(_ wrapping: HostWrapping) throws(CredentialVaultError) {
        let name = wrapping.host
        // Bound to this key's epoch: after a rotation the wrapping would be of a retired key.
        let added = try pool.withConnection { (c: PGConnection) throws(PGFailure) -> PGResult? in
            do throws(PGFailure) {
                return try c.queryUnprepared(schema.enrolHost, wrapping.parameters, deadline: pool.statementDeadline)
            } catch {
                if error.sqlState == "23505" { return nil }
                throw error
            }
        }
        guard let added else { throw .alreadyExists("host \(name) is enrolled (remove it first to give it another key)") }
        _ = try Self.changedRows(added, keyEpoch: keys.keyEpoch)
    }

    /// Removes `name`'s wrapping of the data key; returns whether it was enrolled. The last host
    /// is never removed (the store would open nowhere). A removed host that kept the data key
    /// (it was open there) still knows it: rotate the data key after removing a host you
    /// no longer trust.
    @discardableResult
    public func removeHost(_ name: String) throws(CredentialVaultError) -> Bool {
        let result = try pool.withConnection { (c: PGConnection) throws(PGFailure) -> PGResult in
            try c.queryUnprepared(schema.deleteHost, [.text(name), .int8(keys.keyEpoch)], deadline: pool.statementDeadline)
        }
        let removed = try Self.changedRows(result, keyEpoch: keys.keyEpoch)
        if removed == 0, try hosts().contains(where: { $0.name == name }) {
            throw .invalidArgument("host \(name) is the last enrolled host: add another before removing it")
        }
        return removed > 0
    }

    /// This epoch's key fingerprint (the data key's public verify key, 64 hex digits): the same
    /// on every host that holds the store's key. A host that opens the store for the first time
    /// believes the key it is given; compare its fingerprint (`credvault fleet status`) with an
    /// enrolled host's to know it is the fleet's.
    public var keyFingerprint: String { keys.verifyKey.map { String(format: "%02x", $0) }.joined() }

    /// The enrolled hosts, by name.
    public func hosts() throws(CredentialVaultError) -> [FleetHost] {
        let result = try pool.withConnection { (c: PGConnection) throws(PGFailure) -> PGResult in
            try c.queryUnprepared(schema.listHosts, [], deadline: pool.statementDeadline)
        }
        return (0..<result.rowCount).compactMap { i in
            guard let name = result.text(i, 0), let source = result.int8(i, 1), let epoch = result.int8(i, 2) else { return nil }
            return FleetHost(name: name, keyKind: FleetHostSecret.kind(ofSource: source), keyEpoch: epoch)
        }
    }

    /// The store's id, schema version, key epoch, generation, row count and hosts.
    public func status() throws(CredentialVaultError) -> FleetStatus {
        let (meta, count) = try pool.withConnection { (c: PGConnection) throws(PGFailure) -> (PGResult, PGResult) in
            (
                try c.queryUnprepared(schema.readMeta, [], deadline: pool.statementDeadline),
                try c.queryUnprepared(schema.countRecords, [], deadline: pool.statementDeadline)
            )
        }
        guard let version = meta.int8(0, 0), let epoch = meta.int8(0, 2), let generation = meta.int8(0, 3), let records = count.int8(0, 0)
        else { throw .corrupted("the fleet store's fleet_meta row is missing or malformed") }
        return FleetStatus(
            storeID: storeID, schemaVersion: version, keyEpoch: epoch, keyFingerprint: keyFingerprint, generation: generation, records: records,
            hosts: try hosts())
    }

    /// Rotates the data key: a new random key, every row re-sealed (and re-hashed: the name key
    /// derives from the data key), the new key sealed to every host enrolled by public key and
    /// wrapped for each host of `hosts` (hosts with a key file or passphrase, whose secret the
    /// caller has), in one transaction; every other host's wrapping is dropped (enrol it again
    /// with `addHost`). The new key is signed by the old one (`FleetKeyChain`), so hosts that
    /// knew the old key believe the new one. This host must stay: enrolled by public key, or in
    /// `hosts`. Returns the store opened with the new key; this store, and every other
    /// process's, then reports `reopenRequired(.keyChanged)` (reopen it).
    ///
    /// `progress` is called with the rows written so far and their number, after each (on the
    /// calling thread). Interrupted (the process ends, the connection is lost) before it
    /// commits, a rotation changes nothing: the server rolls its transaction back.
    public func rotateDataKey(
        hosts: [String: FleetHostSecret] = [:], kdf: KDFParameters = .moderate, progress: ((_ done: Int, _ total: Int) -> Void)? = nil
    ) throws(CredentialVaultError) -> PostgresStore {
        let rotated = try observed { () throws(CredentialVaultError) in try rotating(hosts: hosts, kdf: kdf, progress: progress) }
        configuration.metrics.fleetRotation("data_key")
        configuration.logger.info("the fleet store's data key was rotated to epoch \(rotated.keys.keyEpoch)", metadata: ["category": "fleet"])
        return rotated
    }

    /// `rotateDataKey`'s work.
    private func rotating(
        hosts: [String: FleetHostSecret], kdf: KDFParameters, progress: ((_ done: Int, _ total: Int) -> Void)?
    ) throws(CredentialVaultError) -> PostgresStore {
        let newKeys = try FleetKeys(dataKey: SecureBytes.random(count: Crypto.keyBytes), storeID: keys.storeID, keyEpoch: keys.keyEpoch + 1)
        var wrappings: [HostWrapping] = []
        for (name, key) in hosts.sorted(by: { $0.key < $1.key }) {
            try Self.validateHostName(name)
            wrappings.append(
                try HostWrapping.make(host: name, secret: key, kdf: kdf, dataKey: newKeys.dataKey, storeID: keys.storeID, epoch: newKeys.keyEpoch))
        }
        // A deadline for each statement, from when it is sent: a rotation of many rows (10,000
        // inserts) takes far longer than one statement, and one deadline for the whole of it
        // failed every rotation past a few thousand rows with "did not answer in time".
        let outcome = try pool.withConnection(retrySafe: false) { (c: PGConnection) throws(PGFailure) -> Result<Int64, CredentialVaultError> in
            do throws(PGFailure) {
                try c.simple("BEGIN; " + schema.lockForRotation, deadline: pool.statementDeadline)
                // Re-sealed only on top of a state this host verifies (its seal, its memory).
                let askedAt = ContinuousClock.now
                let current = try c.queryUnprepared(schema.rotationState, [], deadline: pool.statementDeadline)
                do throws(CredentialVaultError) {
                    try verify(FleetState(current, epoch: 0, generation: 1, seal: 2, askedAt: askedAt))
                } catch {
                    try? c.simple("ROLLBACK", deadline: pool.statementDeadline)
                    return .failure(error)
                }
                // Every host enrolled by public key is re-keyed (removed ones have no row), when
                // a holder of the current key enrolled it: a row the database's administrator
                // put in or edited (its own public key) gets nothing, and is dropped.
                let boxHosts = try c.queryUnprepared(schema.publicKeyHosts, [], deadline: pool.statementDeadline)
                var kept = wrappings
                for i in 0..<boxHosts.rowCount {
                    guard let name = boxHosts.text(i, 0), hosts[name] == nil, let publicKey = boxHosts.bytes(i, 1),
                        let epoch = boxHosts.int8(i, 2), let wrapped = boxHosts.bytes(i, 3),
                        HostWrapping(host: name, source: 3, salt: publicKey, opsLimit: 0, memLimit: 0, epoch: epoch, wrapped: wrapped)
                            .isEnrolled(by: keys.dataKey, storeID: keys.storeID) && epoch == keys.keyEpoch
                    else { continue }
                    kept.append(
                        HostWrapping.sealed(host: name, publicKey: Array(publicKey), dataKey: newKeys.dataKey, storeID: keys.storeID, epoch: newKeys.keyEpoch))
                }
                guard kept.contains(where: { $0.host == host }) else {
                    try? c.simple("ROLLBACK", deadline: pool.statementDeadline)
                    return .failure(.invalidArgument("this host would not be enrolled after the rotation: give its own key among the hosts to keep"))
                }
                let rows = try c.queryUnprepared(schema.allRecords, [], deadline: pool.statementDeadline)
                var resealed: [[PGParam]] = []
                for i in 0..<rows.rowCount {
                    guard let nameHash = rows.bytes(i, 0), let version = rows.int8(i, 1), let epoch = rows.int8(i, 2),
                        let sealed = rows.bytes(i, 3), version < Int64.max
                    else { throw PGFailure(sqlState: nil, connectionLost: false, reason: "tampered") }
                    let record: FleetRecord
                    do throws(CredentialVaultError) {
                        record = try open(Row(version: version, epoch: epoch, sealed: sealed), nameHash: nameHash, expected: nil)
                    } catch {
                        try? c.simple("ROLLBACK", deadline: pool.statementDeadline)
                        return .failure(error)
                    }
                    var plain = record.encoded()
                    let newHash = newKeys.nameHash(record.key)
                    let newSealed = newKeys.seal(Data(plain), nameHash: newHash, version: version + 1)
                    wipe(&plain)
                    let expires: PGParam = rows.int8(i, 4).map { .int8($0) } ?? .nullInt8
                    resealed.append([.bytes(newHash), .int8(version + 1), .int8(newKeys.keyEpoch), expires, .bytes(newSealed)])
                }
                _ = try c.queryUnprepared(schema.rotationDeleteRecords, [], deadline: pool.statementDeadline)
                for (index, row) in resealed.enumerated() {
                    _ = try c.queryUnprepared(schema.rotationInsertRecord, row, deadline: pool.statementDeadline)
                    progress?(index + 1, resealed.count)
                }
                _ = try c.queryUnprepared(schema.deleteAllHosts, [], deadline: pool.statementDeadline)
                for wrapping in kept { _ = try c.queryUnprepared(schema.insertHost, wrapping.parameters, deadline: pool.statementDeadline) }
                // The generation the re-sealed rows left (the trigger counted them), sealed with
                // the new key in the statement that moves the epoch.
                guard let generation = try c.queryUnprepared(schema.rotationState, [], deadline: pool.statementDeadline).int8(0, 1) else {
                    throw PGFailure(sqlState: nil, connectionLost: false, reason: "tampered")
                }
                let moved = try c.queryUnprepared(
                    schema.setEpoch,
                    [
                        .int8(newKeys.keyEpoch), .int8(keys.keyEpoch), .bytes(newKeys.stateSeal(generation: generation)),
                        .bytes(FleetKeyChain.link(from: keys, to: newKeys)),
                    ],
                    deadline: pool.statementDeadline)
                guard moved.affectedRows == 1 else {
                    try? c.simple("ROLLBACK", deadline: pool.statementDeadline)
                    return .failure(.reopenRequired(.keyChanged))
                }
                try c.simple("COMMIT", deadline: pool.statementDeadline)
                return .success(generation)
            } catch {
                try? c.simple("ROLLBACK", deadline: pool.statementDeadline)
                if error.reason == "tampered" { return .failure(.tampered) }
                throw error
            }
        }
        let generation = try outcome.get()
        memory.remember(FleetMemory.KnownKey(epoch: newKeys.keyEpoch, verifyKey: newKeys.verifyKey))
        try memory.observe(FleetMemory.Mark(epoch: newKeys.keyEpoch, generation: generation), askedAt: .now, force: true)
        return PostgresStore(configuration: configuration, host: host, pool: pool, keys: newKeys, memory: memory)
    }
}
