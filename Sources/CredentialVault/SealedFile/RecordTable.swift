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

    init(_ entries: [CredentialKey: RecordEntry] = [:]) {
        self.entries = entries
        ephemeralCount = entries.values.reduce(0) { $0 + ($1.isEphemeral ? 1 : 0) }
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
        if old?.isEphemeral == true { ephemeralCount -= 1 }
        if new?.isEphemeral == true { ephemeralCount += 1 }
        entries[key] = new
    }
}
