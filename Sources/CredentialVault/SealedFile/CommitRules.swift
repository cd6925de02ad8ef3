/// Which states of the two commit records a crash can leave, and so which ones a reader accepts
/// (docs/FORMAT.md, *What a reader accepts*). Everything else is `tampered`: an edit made
/// without the key (a record copied over the other, swapped, cut off with the journal, a bit
/// flipped) must never silently undo a write, bring back a deleted credential or a single-use
/// value already taken.
///
/// The crash model: a writer rewrites the whole file by rename (both records then name the
/// snapshot), or appends an entry, makes it durable, and only then overwrites the older record
/// with the next generation; a damaged record is first repaired with the state the intact one
/// and the rolled-forward entry give (one generation past the intact one). So:
/// - two intact records are one generation apart, or equal and both naming the snapshot (a
///   rewrite, and no save since);
/// - the older intact record names a state on the way to the newer one;
/// - a damaged record was being written when the power went, after the entry it commits was
///   durable: a complete entry that chains follows the intact record.
enum CommitRules {
    /// The two records' verdict: which one is newest, the older one to check on the way to it,
    /// and whether the other one is damaged (then one complete entry must be rolled forward).
    struct Choice {
        var newestSlot: Int
        var newest: CommitRecord
        /// The older intact record; `nil` when the other one is damaged or both name the snapshot.
        var older: CommitRecord?
        var otherDamaged: Bool
    }

    /// Applies the rules that need no journal: `snapshot` is the state the snapshot alone names.
    static func choose(_ commits: [CommitRecord?], snapshot: CommitRecord) throws(CredentialVaultError) -> Choice {
        switch (commits[0], commits[1]) {
        case (nil, nil):
            throw .tampered
        case (let intact?, nil):
            return Choice(newestSlot: 0, newest: intact, older: nil, otherDamaged: true)
        case (nil, let intact?):
            return Choice(newestSlot: 1, newest: intact, older: nil, otherDamaged: true)
        case (let first?, let second?):
            if first.generation == second.generation {
                // Only a rewrite writes one generation twice, and it names the snapshot.
                guard sameState(first, snapshot), sameState(second, snapshot) else { throw .tampered }
                return Choice(newestSlot: 0, newest: first, older: nil, otherDamaged: false)
            }
            let newestSlot = first.generation > second.generation ? 0 : 1
            let newest = newestSlot == 0 ? first : second
            let older = newestSlot == 0 ? second : first
            guard newest.generation - older.generation == 1 else { throw .tampered }
            return Choice(newestSlot: newestSlot, newest: newest, older: older, otherDamaged: false)
        }
    }

    /// The same state: generation, journal end, record count and chain.
    static func sameState(_ a: CommitRecord, _ b: CommitRecord) -> Bool {
        a.generation == b.generation && a.journalEnd == b.journalEnd && a.recordCount == b.recordCount
            && constantTimeEquals(a.chain, b.chain)
    }

    /// Whether the walk of the journal, now at `position`, agrees with the older record: at the
    /// older record's generation it must stand exactly where that record says. (Its record count
    /// needs no check: an intact record is genuine, and its chain binds every change up to it.)
    static func agrees(_ position: JournalPosition, with older: CommitRecord) -> Bool {
        position.generation != older.generation
            || (UInt64(position.end) == older.journalEnd && constantTimeEquals(position.chain, older.chain))
    }
}
