import CredentialVault
import Foundation

/// The operations, blocking (each is one to three short statements; every write and delete is
/// bound to the key epoch, see `epochBoundWrite`). The synchronous API calls them directly, the
/// asynchronous one on the store's threads.
extension PostgresStore {
    /// A row as stored: its version, key epoch and sealed record.
    struct Row: Sendable {
        let version: Int64
        let epoch: Int64
        let sealed: Data
    }

    /// How many compare-and-swap rounds a write makes before `busy` (each lost round means
    /// another host wrote the same credential in between).
    static let maxRounds = 1000

    // MARK: - Rows

    /// Fetches the row of `nameHash` with the store's generation (one snapshot, one round
    /// trip), and keeps it in the cache.
    func fetch(_ nameHash: Data) throws(CredentialVaultError) -> Row? {
        let askedAt = ContinuousClock.now
        let result = try pool.withConnection { (c: PGConnection) throws(PGFailure) -> PGResult in
            try c.query("read", schema.readRecord, [.bytes(nameHash)], deadline: pool.statementDeadline)
        }
        guard result.rowCount == 1, let generation = result.int8(0, 0), let storeEpoch = result.int8(0, 4) else {
            throw .corrupted("the fleet store's fleet_meta row is missing")
        }
        if storeEpoch != keys.keyEpoch { throw .locked }
        let row: Row?
        if let version = result.int8(0, 1) {
            guard let epoch = result.int8(0, 2), let sealed = result.bytes(0, 3) else { throw .tampered }
            row = Row(version: version, epoch: epoch, sealed: sealed)
        } else {
            row = nil
        }
        cache.record(
            generation: generation, askedAt: askedAt, nameHash: nameHash,
            entry: RecordCache.Entry(version: row?.version ?? 0, epoch: row?.epoch ?? 0, sealed: row?.sealed))
        return row
    }

    /// The row of `nameHash` from the cache when it is known fresh, else from the server.
    func current(_ nameHash: Data) throws(CredentialVaultError) -> Row? {
        if let entry = cache.lookup(nameHash) {
            return entry.sealed.map { Row(version: entry.version, epoch: entry.epoch, sealed: $0) }
        }
        return try fetch(nameHash)
    }

    /// Opens a row and checks that it is the credential asked for (`tampered` otherwise).
    func open(_ row: Row, nameHash: Data, expected key: CredentialKey?) throws(CredentialVaultError) -> FleetRecord {
        var plain = try keys.open(row.sealed, nameHash: nameHash, version: row.version, epoch: row.epoch)
        defer { plain.resetBytes(in: 0..<plain.count) }
        let record = try FleetRecord.decode(plain)
        if let key {
            // Asked by name: `nameHash` is that name's hash and the seal binds it, so the name
            // inside must be the one asked for.
            guard record.key == key else { throw .tampered }
        } else {
            // Listed: the name inside must hash to the row's id (belt and braces: the seal
            // binds the id, so only a holder of the data key could have made such a row).
            guard keys.nameHash(record.key) == nameHash else { throw .tampered }
        }
        return record
    }

    func isExpired(_ record: FleetRecord) -> Bool {
        guard let expires = record.expires else { return false }
        return FleetRecord.milliseconds(configuration.clock.now()) >= expires
    }

    /// Deletes an expired row (only that version: a newer save stays).
    func purge(_ nameHash: Data, version: Int64) throws(CredentialVaultError) {
        _ = try epochBoundWrite("delete-version", schema.deleteRecordVersion, [.bytes(nameHash), .int8(version), .int8(keys.keyEpoch)])
        cache.forget(nameHash)
    }

    /// Deletes every expired ephemeral row (on open and with `listKeys`).
    func purgeExpired() throws(CredentialVaultError) {
        try Self.purgeExpired(pool: pool, schema: schema, keyEpoch: keys.keyEpoch, now: configuration.clock.now())
    }

    /// Refuses what a fleet store cannot honour: a persistent device-only credential.
    func check(_ options: StorageOptions) throws(CredentialVaultError) {
        try options.validate()
        if !options.lifetime.isEphemeral && options.accessibility == .deviceOnly {
            throw .unsupported(
                "a fleet store is shared by many hosts, so it cannot keep a credential device-only: save it as portable (.portable, credvault store --portable) or use a local store")
        }
    }

    // MARK: - Operations

    func blockingSave(_ value: Data, for key: CredentialKey, options: StorageOptions) throws(CredentialVaultError) {
        try key.validate()
        try check(options)
        guard value.count <= FleetRecord.maxValueBytes else { throw .invalidArgument("a fleet store value is at most 64 MiB") }
        let nameHash = keys.nameHash(key)
        let now = FleetRecord.milliseconds(configuration.clock.now())
        var expires: Int64?
        if case .ephemeral(let ttl) = options.lifetime {
            // validate() bounded the TTL to a year; a clock near the end of time saturates.
            let (sum, overflow) = now.addingReportingOverflow(PGConnection.milliseconds(ttl))
            expires = overflow ? Int64.max : sum
        }
        var row = try current(nameHash)
        for _ in 0..<Self.maxRounds {
            var created = now
            if let row {
                let old = try open(row, nameHash: nameHash, expected: key)
                if !isExpired(old) { created = min(old.created, now) }
            }
            guard (row?.version ?? 0) < Int64.max else { throw .corrupted("a row version is at its maximum") }
            let version = (row?.version ?? 0) + 1
            var plain = FleetRecord(
                key: key, accessibility: options.accessibility, isEphemeral: expires != nil, created: created, modified: now,
                expires: expires, value: value
            ).encoded()
            let sealed = keys.seal(Data(plain), nameHash: nameHash, version: version)
            wipe(&plain)
            let expiresParam: PGParam = expires.map { .int8($0) } ?? .nullInt8
            // Bound to this key's epoch: after a rotation nothing lands under the old key, and
            // the read below reports the rotation (`locked`).
            let won = try pool.withConnection { (c: PGConnection) throws(PGFailure) -> Bool in
                let result: PGResult
                if let row {
                    result = try c.query(
                        "update", schema.updateRecord,
                        [.bytes(nameHash), .int8(row.version), .int8(version), .int8(keys.keyEpoch), expiresParam, .bytes(sealed)],
                        deadline: pool.statementDeadline)
                } else {
                    result = try c.query(
                        "insert", schema.insertRecord, [.bytes(nameHash), .int8(version), .int8(keys.keyEpoch), expiresParam, .bytes(sealed)],
                        deadline: pool.statementDeadline)
                }
                return result.affectedRows == 1
            }
            if won {
                cache.wrote(nameHash, entry: RecordCache.Entry(version: version, epoch: keys.keyEpoch, sealed: sealed))
                return
            }
            // Another writer came first (read its row and try again on top of it), or the store
            // was rotated (the read reports `locked`).
            row = try fetch(nameHash)
        }
        throw .busy
    }

    func blockingLoad(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try key.validate()
        let nameHash = keys.nameHash(key)
        if let cached = cache.lookup(nameHash) {
            guard let sealed = cached.sealed else { return nil }
            let record = try open(Row(version: cached.version, epoch: cached.epoch, sealed: sealed), nameHash: nameHash, expected: key)
            if !isExpired(record) { return record.value }
        }
        guard let row = try fetch(nameHash) else { return nil }
        let record = try open(row, nameHash: nameHash, expected: key)
        if isExpired(record) {
            try purge(nameHash, version: row.version)
            throw .expired
        }
        return record.value
    }

    /// The cached value of `key` when the cache is fresh and holds it (`.some(nil)`: known
    /// absent); `nil` when the server must be asked. Never blocks.
    func cachedValue(_ key: CredentialKey) throws(CredentialVaultError) -> Data?? {
        try key.validate()
        let nameHash = keys.nameHash(key)
        guard let cached = cache.lookup(nameHash) else { return nil }
        guard let sealed = cached.sealed else { return .some(nil) }
        let record = try open(Row(version: cached.version, epoch: cached.epoch, sealed: sealed), nameHash: nameHash, expected: key)
        return isExpired(record) ? nil : .some(record.value)
    }

    func blockingTake(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try key.validate()
        let nameHash = keys.nameHash(key)
        for _ in 0..<Self.maxRounds {
            guard let row = try fetch(nameHash) else { return nil }
            let record = try open(row, nameHash: nameHash, expected: key)
            if isExpired(record) {
                try purge(nameHash, version: row.version)
                throw .expired
            }
            // Single use: only the one DELETE that still finds this version gets the value.
            // Not retried after a lost connection: whether it was consumed would be unknown.
            let taken = try epochBoundWrite(
                "delete-version", schema.deleteRecordVersion, [.bytes(nameHash), .int8(row.version), .int8(keys.keyEpoch)], retrySafe: false)
            if taken == 1 {
                cache.wrote(nameHash, entry: RecordCache.Entry(version: 0, epoch: 0, sealed: nil))
                return record.value
            }
        }
        throw .busy
    }

    func blockingDelete(_ key: CredentialKey) throws(CredentialVaultError) -> Bool {
        try key.validate()
        let nameHash = keys.nameHash(key)
        // After a rotation the row has another id: `locked`, never a false "there was none".
        let deleted = try epochBoundWrite("delete", schema.deleteRecord, [.bytes(nameHash), .int8(keys.keyEpoch)])
        cache.wrote(nameHash, entry: RecordCache.Entry(version: 0, epoch: 0, sealed: nil))
        return deleted > 0
    }

    func blockingListKeys(service: String?) throws(CredentialVaultError) -> [CredentialKey] {
        try purgeExpired()
        let result = try pool.withConnection { (c: PGConnection) throws(PGFailure) -> PGResult in
            try c.query("list", schema.persistentRecords, [], deadline: pool.statementDeadline)
        }
        var keys: [CredentialKey] = []
        for index in 0..<result.rowCount {
            let record = try openListed(result, index)
            // A row without a clear expiry whose sealed record is ephemeral was edited.
            if record.isEphemeral { throw .tampered }
            if record.key.isIn(service: service) { keys.append(record.key) }
        }
        return keys.sorted(by: CredentialKey.storageOrder)
    }

    private func openListed(_ result: PGResult, _ index: Int) throws(CredentialVaultError) -> FleetRecord {
        guard let nameHash = result.bytes(index, 0), let version = result.int8(index, 1), let epoch = result.int8(index, 2),
            let sealed = result.bytes(index, 3)
        else { throw .tampered }
        return try open(Row(version: version, epoch: epoch, sealed: sealed), nameHash: nameHash, expected: nil)
    }

    func blockingMetadata(for key: CredentialKey) throws(CredentialVaultError) -> CredentialMetadata? {
        try key.validate()
        let nameHash = keys.nameHash(key)
        guard let row = try current(nameHash) else { return nil }
        let record = try open(row, nameHash: nameHash, expected: key)
        if isExpired(record) {
            try purge(nameHash, version: row.version)
            return nil
        }
        return record.metadata
    }

    func blockingDeleteAll(service: String?) throws(CredentialVaultError) -> Int {
        guard let service else {
            let count = try epochBoundWrite("delete-all", schema.deleteEverything, [.int8(keys.keyEpoch)])
            cache.expire()
            return count
        }
        let result = try pool.withConnection { (c: PGConnection) throws(PGFailure) -> PGResult in
            try c.query("all", schema.allRecords, [], deadline: pool.statementDeadline)
        }
        var count = 0
        for index in 0..<result.rowCount {
            let record = try openListed(result, index)
            guard record.key.isIn(service: service), let nameHash = result.bytes(index, 0), let version = result.int8(index, 1) else {
                continue
            }
            count += try epochBoundWrite(
                "delete-version", schema.deleteRecordVersion, [.bytes(nameHash), .int8(version), .int8(keys.keyEpoch)])
            cache.forget(nameHash)
        }
        cache.expire()
        return count
    }
}
