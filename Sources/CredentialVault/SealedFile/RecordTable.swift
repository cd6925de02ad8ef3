/// The records of an unlocked vault by key, able to undo the changes made since
/// `beginChanges()`.
///
/// A write changes a draft of the vault's state and adopts it only once the file is durably
/// written. Copying the whole table for the draft cost a copy and a release of every record
/// (tens of thousands of reference counts for a large vault) on every save; with the undo log
/// the draft takes over the table itself and a failed write puts back just the records it
/// touched.
struct RecordTable: Sendable, Sequence {
    private(set) var entries: [CredentialKey: RecordEntry]
    /// The previous value of every key changed since `beginChanges()` (`nil` inside: absent).
    private var undo: [CredentialKey: RecordEntry?]?
    /// How many records are ephemeral, so that purging expired ones costs nothing when none is.
    private(set) var ephemeralCount: Int
    /// Each record's key by its record id: a journal deletes a record by id.
    private var keysByID: [RecordID: CredentialKey]

    init(_ entries: [CredentialKey: RecordEntry] = [:]) {
        self.entries = entries
        ephemeralCount = entries.values.reduce(0) { $0 + ($1.isEphemeral ? 1 : 0) }
        // Ids are unique in any table read from a file (checked there); never trap on one that is not.
        keysByID = Dictionary(entries.map { (RecordID($1.sealed.id), $0) }, uniquingKeysWith: { first, _ in first })
    }

    var count: Int { entries.count }
    var values: Dictionary<CredentialKey, RecordEntry>.Values { entries.values }
    var keys: Dictionary<CredentialKey, RecordEntry>.Keys { entries.keys }

    func makeIterator() -> Dictionary<CredentialKey, RecordEntry>.Iterator { entries.makeIterator() }

    subscript(key: CredentialKey) -> RecordEntry? {
        get { entries[key] }
        set { replace(key, with: newValue) }
    }

    /// Removes the record; returns it.
    @discardableResult
    mutating func removeValue(forKey key: CredentialKey) -> RecordEntry? {
        let old = entries[key]
        if old != nil { replace(key, with: nil) }
        return old
    }

    /// The key of the record with this id, if the table holds it.
    func key(forRecordID id: [UInt8]) -> CredentialKey? { keysByID[RecordID(id)] }

    /// What changed since `beginChanges()`: per key, the record before and the record now
    /// (`nil`: absent), leaving out keys changed and then put back.
    var pendingChanges: [(before: RecordEntry?, after: RecordEntry?)] {
        guard let log = undo else { return [] }
        return log.compactMap { key, before in
            let after = entries[key]
            return before?.sealed.id == after?.sealed.id ? nil : (before, after)
        }
    }

    /// Starts recording what to put back (see `rollBack()`).
    mutating func beginChanges() { undo = [:] }

    /// Keeps the changes since `beginChanges()`.
    mutating func commit() { undo = nil }

    /// Puts back every record changed since `beginChanges()`.
    mutating func rollBack() {
        guard let log = undo else { return }
        undo = nil
        for (key, old) in log { replace(key, with: old) }
    }

    private mutating func replace(_ key: CredentialKey, with new: RecordEntry?) {
        let old = entries[key]
        if undo != nil && undo?.index(forKey: key) == nil { undo?[key] = .some(old) }
        if let old {
            if old.isEphemeral { ephemeralCount -= 1 }
            keysByID[RecordID(old.sealed.id)] = nil
        }
        if let new {
            if new.isEphemeral { ephemeralCount += 1 }
            keysByID[RecordID(new.sealed.id)] = key
        }
        entries[key] = new
    }
}

/// A record id as two words: hashing them costs less than hashing an array. (Ids are 16 bytes
/// in every file; another length, which only a test makes, is kept whole.)
struct RecordID: Hashable, Sendable {
    let high: UInt64
    let low: UInt64
    let otherLength: [UInt8]?

    init(_ bytes: [UInt8]) {
        guard bytes.count == SealedRecord.idSize else {
            (high, low, otherLength) = (0, 0, bytes)
            return
        }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for i in 0..<8 {
            high = high << 8 | UInt64(bytes[i])
            low = low << 8 | UInt64(bytes[8 + i])
        }
        (self.high, self.low, otherLength) = (high, low, nil)
    }
}
