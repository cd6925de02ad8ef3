import CredentialVault
import Foundation

/// The operations, blocking (each is one to three short statements; every write and delete is
/// bound to the key epoch, see `sealedWrite`). The synchronous API calls them directly, the
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

    /// Fetches the row of `nameHash` with the store's state (one snapshot, one round trip),
    /// verifies the state (`verify`) and keeps the row in the cache.
    func fetch(_ nameHash: Data) throws(CredentialVaultError) -> Row? { try fetchWithState(nameHash).row }

    /// The same, with the state the row is current at (a write on top of it is bound to it).
    func fetchWithState(_ nameHash: Data) throws(CredentialVaultError) -> (row: Row?, state: FleetState) {
        let askedAt = ContinuousClock.now
        let result = try pool.withConnection { (c: PGConnection) throws(PGFailure) -> PGResult in
            try c.query("read", schema.readRecord, [.bytes(nameHash)], deadline: pool.statementDeadline)
        }
        let state = try FleetState(result, epoch: 4, generation: 0, seal: 5, askedAt: askedAt)
        try verify(state)
        let generation = state.generation
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
        return (row, state)
    }

    /// The row of `nameHash` from the cache when it is known fresh, else from the server; with
    /// the state it is current at.
    func current(_ nameHash: Data) throws(CredentialVaultError) -> (row: Row?, state: FleetState) {
        if let hit = cache.hit(nameHash) {
            // The cached state was verified when fetched (its seal, this host's memory).
            let state = FleetState(epoch: keys.keyEpoch, generation: hit.generation, seal: nil)
            return (hit.entry.sealed.map { Row(version: hit.entry.version, epoch: hit.entry.epoch, sealed: $0) }, state)
        }
        return try fetchWithState(nameHash)
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

    /// Deletes an expired row (only that version, over the state it was read at: a newer save
    /// stays; a write in between leaves it for the next purge).
    func purge(_ nameHash: Data, version: Int64, over state: FleetState) throws(CredentialVaultError) {
        _ = try deleteVersion(nameHash, version: version, over: state)
        cache.forget(nameHash)
    }

    /// Deletes the row `nameHash` at `version` over `state`, or over the state another write
    /// moved it to (the version check still tells whether the row is the one read): 1 or 0
    /// rows, and the state the delete was made over.
    func deleteVersion(
        _ nameHash: Data, version: Int64, over state: FleetState, retrySafe: Bool = true
    ) throws(CredentialVaultError) -> (deleted: Int, over: FleetState) {
        var state = state
        for _ in 0..<Self.maxRounds {
            switch try sealedWrite(
                "delete-version", schema.deleteRecordVersion, [.bytes(nameHash), .int8(version), .int8(keys.keyEpoch)], over: state,
                retrySafe: retrySafe)
            {
            case .changed(let deleted): return (deleted, state)
            case .moved(let current): state = current
            }
        }
        throw .busy
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
        var (row, state) = try current(nameHash)
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
            // Bound to this key's epoch and the state read: after a rotation nothing lands under
            // the old key (`reopenRequired`), and a write on top of a state another write moved is made
            // again on the new one.
            let outcome: SealedWriteOutcome
            if let row {
                outcome = try sealedWrite(
                    "update", schema.updateRecord,
                    [.bytes(nameHash), .int8(row.version), .int8(version), .int8(keys.keyEpoch), expiresParam, .bytes(sealed)], over: state)
            } else {
                outcome = try sealedWrite(
                    "insert", schema.insertRecord, [.bytes(nameHash), .int8(version), .int8(keys.keyEpoch), expiresParam, .bytes(sealed)],
                    over: state)
            }
            switch outcome {
            case .changed(1):
                cache.wrote(
                    nameHash, entry: RecordCache.Entry(version: version, epoch: keys.keyEpoch, sealed: sealed), generation: state.generation + 1)
                return
            case .moved(let current):
                // A write elsewhere in the store came first: again on the state it left (the
                // version check tells whether this row changed too).
                state = current
            case .changed:
                // Another writer of this row came first: read its row, try again on top of it.
                (row, state) = try fetchWithState(nameHash)
            }
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
        let (fetched, state) = try fetchWithState(nameHash)
        guard let row = fetched else { return nil }
        let record = try open(row, nameHash: nameHash, expected: key)
        if isExpired(record) {
            try purge(nameHash, version: row.version, over: state)
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
            let (fetched, state) = try fetchWithState(nameHash)
            guard let row = fetched else { return nil }
            let record = try open(row, nameHash: nameHash, expected: key)
            if isExpired(record) {
                try purge(nameHash, version: row.version, over: state)
                throw .expired
            }
            // Single use: only the one DELETE that still finds this version gets the value.
            // Not retried after a lost connection: whether it was consumed would be unknown.
            let (taken, over) = try deleteVersion(nameHash, version: row.version, over: state, retrySafe: false)
            if taken == 1 {
                cache.wrote(nameHash, entry: RecordCache.Entry(version: 0, epoch: 0, sealed: nil), generation: over.generation + 1)
                return record.value
            }
        }
        throw .busy
    }

    func blockingDelete(_ key: CredentialKey) throws(CredentialVaultError) -> Bool {
        try key.validate()
        let nameHash = keys.nameHash(key)
        // Read from the server (never a stale "there was none"), then deleted over that state.
        // After a rotation the read reports it: `reopenRequired`.
        for _ in 0..<Self.maxRounds {
            let (fetched, state) = try fetchWithState(nameHash)
            guard let row = fetched else { return false }
            let (deleted, over) = try deleteVersion(nameHash, version: row.version, over: state)
            if deleted == 1 {
                cache.wrote(nameHash, entry: RecordCache.Entry(version: 0, epoch: 0, sealed: nil), generation: over.generation + 1)
                return true
            }
        }
        throw .busy
    }

    func blockingListKeys(service: String?) throws(CredentialVaultError) -> [CredentialKey] {
        try purgeExpired()
        let askedAt = ContinuousClock.now
        let result = try pool.withConnection { (c: PGConnection) throws(PGFailure) -> PGResult in
            try c.query("list", schema.persistentRecords, [], deadline: pool.statementDeadline)
        }
        try verify(FleetState(result, epoch: 0, generation: 1, seal: 2, askedAt: askedAt))
        var keys: [CredentialKey] = []
        for index in 0..<result.rowCount where result.bytes(index, 3) != nil {
            let record = try openListed(result, index)
            // A row without a clear expiry whose sealed record is ephemeral was edited.
            if record.isEphemeral { throw .tampered }
            if record.key.isIn(service: service) { keys.append(record.key) }
        }
        return keys.sorted(by: CredentialKey.storageOrder)
    }

    private func openListed(_ result: PGResult, _ index: Int) throws(CredentialVaultError) -> FleetRecord {
        guard let nameHash = result.bytes(index, 3), let version = result.int8(index, 4), let epoch = result.int8(index, 5),
            let sealed = result.bytes(index, 6)
        else { throw .tampered }
        return try open(Row(version: version, epoch: epoch, sealed: sealed), nameHash: nameHash, expected: nil)
    }

    func blockingMetadata(for key: CredentialKey) throws(CredentialVaultError) -> CredentialMetadata? {
        try key.validate()
        let nameHash = keys.nameHash(key)
        let (current, state) = try current(nameHash)
        guard let row = current else { return nil }
        let record = try open(row, nameHash: nameHash, expected: key)
        if isExpired(record) {
            try purge(nameHash, version: row.version, over: state)
            return nil
        }
        return record.metadata
    }

    func blockingDeleteAll(service: String?) throws(CredentialVaultError) -> Int {
        guard let service else {
            let count = try deleteCounted("delete-all", schema.deleteEverything, [.int8(keys.keyEpoch)], expiredAt: nil)
            cache.expire()
            return count
        }
        // The rows and their state in one snapshot; the matching ones deleted one by one by
        // version (one rewritten meanwhile stays, as with any delete that lost its race), each
        // over the state the one before left.
        let askedAt = ContinuousClock.now
        let result = try pool.withConnection { (c: PGConnection) throws(PGFailure) -> PGResult in
            try c.query("all", schema.allRecordsWithState, [], deadline: pool.statementDeadline)
        }
        var state = try FleetState(result, epoch: 0, generation: 1, seal: 2, askedAt: askedAt)
        try verify(state)
        var count = 0
        for index in 0..<result.rowCount where result.bytes(index, 3) != nil {
            let record = try openListed(result, index)
            guard record.key.isIn(service: service), let nameHash = result.bytes(index, 3), let version = result.int8(index, 4) else {
                continue
            }
            let (deleted, over) = try deleteVersion(nameHash, version: version, over: state)
            count += deleted
            state = FleetState(epoch: over.epoch, generation: over.generation + Int64(deleted), seal: nil)
            cache.forget(nameHash)
        }
        cache.expire()
        return count
    }
}
