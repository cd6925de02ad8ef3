import Foundation
import Synchronization

/// The process's cache of rows, kept sealed (each hit opens the row again: a few hundred
/// nanoseconds for a small value, and no plaintext lingers in ordinary memory between reads).
///
/// Freshness: every row fetched comes with the store-wide generation of the same snapshot (a
/// trigger increments it on every change to any record). A row is served from the cache only
/// while less than `interval` has passed since the generation was last read; a fetch that sees
/// a newer generation drops every entry. So a cached read never returns a state older than
/// `interval` (plus the round trip that read the generation). NOTIFY wakes the cache early
/// (`expire()`), but is only a hint: it is lost across reconnects and never reaches a replica.
final class RecordCache: Sendable {
    /// A row as fetched: `sealed == nil` records that there was none.
    struct Entry: Sendable {
        let version: Int64
        let epoch: Int64
        let sealed: Data?
        /// For a row this process wrote: the least generation a fetch must have seen to know
        /// of that write (a fetch sent before it committed must not bring back the old row).
        var floor: Int64 = .min
    }

    private struct State {
        var entries: [Data: Entry] = [:]
        var generation: Int64 = .min
        var checkedAt: ContinuousClock.Instant?
        /// When the cache was last expired: a fetch sent before it cannot make it fresh again.
        var expiredAt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    private let interval: Duration

    init(interval: Duration) { self.interval = interval }

    /// The cached row of `nameHash` while the cache is known fresh; `nil` when it must be fetched.
    func lookup(_ nameHash: Data) -> Entry? { hit(nameHash)?.entry }

    /// The cached row of `nameHash` and the store-wide generation it is known current at, while
    /// the cache is known fresh (a write made on top of it is bound to that generation).
    func hit(_ nameHash: Data) -> (entry: Entry, generation: Int64)? {
        guard interval > .zero else { return nil }
        let now = ContinuousClock.now
        return state.withLock { s in
            guard let checked = s.checkedAt, checked.duration(to: now) < interval, let entry = s.entries[nameHash] else { return nil }
            return (entry, max(s.generation, entry.floor))
        }
    }

    /// Records a row fetched with `generation` by a query sent at `askedAt`. A result older
    /// than what the cache holds (a slower concurrent fetch) is not kept.
    func record(generation: Int64, askedAt: ContinuousClock.Instant, nameHash: Data, entry: Entry) {
        guard interval > .zero else { return }
        state.withLock { s in
            if generation < s.generation { return }
            // Sent before the last expiry (a NOTIFY, the fleet lock taken): what it saw may
            // predate what the expiry was for, so it neither refreshes nor fills the cache.
            if let expired = s.expiredAt, askedAt < expired { return }
            if generation > s.generation {
                s.entries.removeAll(keepingCapacity: true)
                s.generation = generation
                s.checkedAt = askedAt
            } else if s.checkedAt.map({ $0 < askedAt }) ?? true {
                s.checkedAt = askedAt
            }
            // A fetch older than this process's own write of the row keeps the write.
            if let own = s.entries[nameHash], own.floor > generation { return }
            s.entries[nameHash] = entry
        }
    }

    /// Replaces the entry of a row this process has just written: its own write is newer than
    /// any snapshot the cache holds, and a process reads its own writes. Its commit moved the
    /// generation past the one the cache knows, so only a fetch that saw a later generation
    /// (which drops every entry) replaces it.
    ///
    /// `generation` is the generation the write left (it was bound to the one before): when
    /// the cache knew the one before, only this write came in between, so every other entry is
    /// still current at the new one.
    func wrote(_ nameHash: Data, entry: Entry, generation: Int64) {
        guard interval > .zero else { return }
        state.withLock { s in
            if s.generation == generation - 1 { s.generation = generation }
            var own = entry
            own.floor = generation
            s.entries[nameHash] = own
        }
    }

    /// Forgets one row.
    func forget(_ nameHash: Data) {
        _ = state.withLock { $0.entries.removeValue(forKey: nameHash) }
    }

    /// Makes the next read of every row go to the server (a NOTIFY, the exclusive lock taken).
    func expire() {
        let now = ContinuousClock.now
        state.withLock { s in
            s.checkedAt = nil
            s.expiredAt = now
        }
    }
}
