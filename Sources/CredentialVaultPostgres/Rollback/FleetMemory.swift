import CredentialVault
import Foundation
import Synchronization

/// The newest state of one fleet store this host has seen: its key epoch and its store-wide
/// generation (`fleet_meta`, sealed with the data key). A state older than it is a copy of the
/// database put back (a restore, or a removed host writing back what it copied): `rolledBack`.
///
/// Kept in the process (every read checks it) and in the host state directory beside the
/// sealed file's rollback counters (`HostFileCustodian`'s state files:
/// `counters/fleet-<store id>`, 0600 in 0700 directories, replaced atomically), so that the
/// next process on this machine remembers it too. Written when a store is opened or rotated,
/// then, while only the generation moves, at most once per `persistInterval` and when the
/// store is released: a crash loses at most the last interval's advance (a restore to a state
/// inside it goes unnoticed by this host afterwards).
///
/// The file also counts the restores accepted on this host (`accept`): a process that saw a
/// newer state before one was accepted follows the accepted state instead of refusing it, and
/// never writes its older knowledge over it.
///
/// Each write reads the file first and keeps the newer of the two marks; two processes of one
/// host writing at the same moment can still leave the older of their two marks (the file
/// then lags behind what one of them saw; it is never ahead of what was seen).
final class FleetMemory: Sendable {
    /// An epoch and generation; ordered by epoch, then generation.
    struct Mark: Sendable, Equatable, Comparable {
        var epoch: Int64
        var generation: Int64

        static func < (a: Mark, b: Mark) -> Bool { (a.epoch, a.generation) < (b.epoch, b.generation) }
    }

    /// The newest data key this host knows to be the store's, by its public verify key
    /// (`FleetKeys.verifyKey`): a later key is believed only when a chain of rotations signed
    /// by the keys before leads to it (`FleetKeyChain`).
    struct KnownKey: Sendable, Equatable {
        var epoch: Int64
        var verifyKey: [UInt8]
    }

    /// What the file holds: the mark, how many restores were accepted, the known key.
    private struct Saved: Equatable {
        var mark: Mark
        var accepted: UInt64
        var key: KnownKey?
    }

    fileprivate struct State {
        /// What was known before this process's newer marks: the file's mark when it was read
        /// (or an accepted one, or the oldest mark dropped from `history`), and since when.
        var base: Mark?
        var baseAt = ContinuousClock.now
        /// Each newer mark this process saw, with when it saw it (oldest first; the oldest
        /// dropped into `base` past `historyLimit`).
        var history: [(at: ContinuousClock.Instant, mark: Mark)] = []
        var persisted: Mark?
        var persistedAt: ContinuousClock.Instant?
        /// The file's count of accepted restores when this process last read or wrote it.
        var accepted: UInt64 = 0
        var key: KnownKey?
        var persistedKey: KnownKey?
    }

    /// Where the mark persists (`nil`: in this process only).
    private let custodian: HostFileCustodian?
    private let name: String
    private let state: Mutex<State>
    /// Held while the file is read and written.
    private let writing = Mutex(())
    /// The least time between two writes of the mark while only the generation moves.
    static let persistInterval = Duration.seconds(1)
    /// How many marks of this process are kept with their time.
    static let historyLimit = 64

    /// The memory of the store `storeID` kept in `directory` (the host state directory; `nil`
    /// keeps it in this process only). Reads the persisted mark.
    init(directory: URL?, storeID: Data) throws(CredentialVaultError) {
        custodian = directory.map { HostFileCustodian(directory: $0) }
        name = "fleet-" + storeID.map { String(format: "%02x", $0) }.joined()
        var initial = State()
        if let saved = try Self.read(custodian, name) {
            initial.base = saved.mark
            initial.persisted = saved.mark
            initial.accepted = saved.accepted
            initial.key = saved.key
            initial.persistedKey = saved.key
        }
        state = Mutex(initial)
    }

    /// The newest state seen, if any.
    var seen: Mark? { state.withLock { $0.seen } }

    /// The newest data key known to be the store's, if any.
    var knownKey: KnownKey? { state.withLock { $0.key } }

    /// Remembers `key` as the store's when it is of the known key's epoch or later (written out
    /// with the next mark: the open's, the rotation's).
    func remember(_ key: KnownKey) {
        state.withLock { s in
            if s.key.map({ $0.epoch <= key.epoch }) ?? true { s.key = key }
        }
    }

    /// Checks that `mark`, read by a statement sent at `askedAt`, is not older than what this
    /// host had seen when it was sent (`rolledBack` otherwise), and remembers it when newer.
    /// (A statement sent before a newer state was seen may answer with the older one: its
    /// snapshot was taken first.) `force` writes it out at once (an open, a rotation);
    /// otherwise a write that fails is tried again later, as the mark moves on.
    func observe(_ mark: Mark, askedAt: ContinuousClock.Instant, force: Bool = false) throws(CredentialVaultError) {
        if let floor = state.withLock({ $0.floor(askedAt) }), mark < floor {
            // A restore accepted on this host since this process read the file wins.
            try adoptAcceptedRestore()
            if let floor = state.withLock({ $0.floor(askedAt) }), mark < floor { throw Self.rolledBack(mark, seen: floor) }
        }
        // What to write out now, if anything: the newest mark seen (with the known key).
        let due: Mark? = state.withLock { s in
            if let seen = s.seen, !(seen < mark) {
                // Not newer; only a key learnt since the last write makes a forced write.
                return force && s.persistedKey != s.key ? seen : nil
            }
            s.history.append((.now, mark))
            if s.history.count > Self.historyLimit { (s.baseAt, s.base) = s.history.removeFirst() }
            guard s.persisted != mark || s.persistedKey != s.key else { return nil }
            let write = force || s.persisted.map { $0.epoch != mark.epoch } ?? true
                || s.persistedAt.map { $0.duration(to: .now) >= Self.persistInterval } ?? true
            return write ? mark : nil
        }
        guard let due else { return }
        if force { try persist(due) } else { try? persist(due) }
    }

    /// Writes out what was seen and not yet written (the store is being released).
    func flush() {
        guard let mark = state.withLock({ $0.persisted == $0.seen && $0.persistedKey == $0.key ? nil : $0.seen }) else { return }
        try? persist(mark)
    }

    /// Forgets what was seen and remembers `mark` instead, even if older, counting one more
    /// accepted restore (a database restored on purpose: `PostgresStore.acceptRestore`).
    func accept(_ mark: Mark, key: KnownKey) throws(CredentialVaultError) {
        try writing.withLock { (_) throws(CredentialVaultError) in
            let accepted = (try Self.read(custodian, name)?.accepted ?? 0) &+ 1
            try write(Saved(mark: mark, accepted: accepted, key: key))
            state.withLock { s in
                s.key = key
                s.persistedKey = key
                s.base = mark
                s.baseAt = .now
                s.history = []
                s.persisted = mark
                s.persistedAt = .now
                s.accepted = accepted
            }
        }
    }

    /// Writes `mark` out unless the file holds a newer one, or a restore was accepted since
    /// this process read it (then its state is adopted instead). One writer at a time in the
    /// process, so the file never goes back to an older mark a slower writer held.
    private func persist(_ mark: Mark) throws(CredentialVaultError) {
        guard custodian != nil else { return }
        try writing.withLock { (_) throws(CredentialVaultError) in
            let saved = try Self.read(custodian, name)
            let (accepted, key) = state.withLock { ($0.accepted, $0.key) }
            if let saved, saved.accepted != accepted {
                adopt(saved)
                return
            }
            // The newer of each: this process's and what another process wrote.
            let newMark = saved.map { max($0.mark, mark) } ?? mark
            let newKey = [saved?.key, key].compactMap { $0 }.max { $0.epoch < $1.epoch }
            let next = Saved(mark: newMark, accepted: accepted, key: newKey)
            if next != saved { try write(next) }
            adopt(next)
        }
    }

    /// Re-reads the file and takes its state when a restore was accepted since.
    private func adoptAcceptedRestore() throws(CredentialVaultError) {
        guard custodian != nil else { return }
        try writing.withLock { (_) throws(CredentialVaultError) in
            guard let saved = try Self.read(custodian, name), saved.accepted != state.withLock({ $0.accepted }) else { return }
            adopt(saved)
        }
    }

    /// Takes what the file holds: after an accepted restore its mark replaces what was seen;
    /// otherwise it is newer knowledge of another process.
    private func adopt(_ saved: Saved) {
        state.withLock { s in
            if saved.accepted != s.accepted {
                s.base = saved.mark
                s.baseAt = .now
                s.history = []
            } else if s.seen.map({ $0 < saved.mark }) ?? true {
                s.history.append((.now, saved.mark))
            }
            s.accepted = saved.accepted
            s.persisted = saved.mark
            s.persistedAt = .now
            if let key = saved.key, s.key.map({ $0.epoch <= key.epoch }) ?? true { s.key = key }
            s.persistedKey = saved.key
        }
    }

    private func write(_ saved: Saved) throws(CredentialVaultError) {
        guard let custodian else { return }
        var writer = ByteWriter(capacity: 64)
        writer.u64(UInt64(bitPattern: saved.mark.epoch))
        writer.u64(UInt64(bitPattern: saved.mark.generation))
        writer.u64(saved.accepted)
        if let key = saved.key {
            writer.u64(UInt64(bitPattern: key.epoch))
            writer.raw(key.verifyKey)
        }
        try custodian.writeState(name, writer.bytes)
    }

    /// The file: u64 key epoch, u64 generation, u64 restores accepted, then (once a key is
    /// known) u64 its epoch and its 32-byte verify key.
    private static func read(_ custodian: HostFileCustodian?, _ name: String) throws(CredentialVaultError) -> Saved? {
        guard let custodian, let bytes = try custodian.readState(name, limit: 128) else { return nil }
        guard bytes.count == 24 || bytes.count == 64 else {
            throw .io("the fleet store's remembered state \(name) is damaged (\(bytes.count) bytes, not 24 or 64)")
        }
        return bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            let epoch = Int64(bitPattern: reader.u64() ?? 0)
            let generation = Int64(bitPattern: reader.u64() ?? 0)
            let accepted = reader.u64() ?? 0
            var key: KnownKey?
            if let keyEpoch = reader.u64(), let verifyKey = reader.take(32) {
                key = KnownKey(epoch: Int64(bitPattern: keyEpoch), verifyKey: Array(verifyKey))
            }
            return Saved(mark: Mark(epoch: epoch, generation: generation), accepted: accepted, key: key)
        }
    }

    static func rolledBack(_ mark: Mark, seen: Mark) -> CredentialVaultError {
        if mark.epoch < seen.epoch {
            return .rolledBack(
                "the fleet store is at key epoch \(mark.epoch), this host has seen epoch \(seen.epoch): an older copy of the database was put back (a restore, or a removed host writing back what it copied)")
        }
        return .rolledBack(
            "the fleet store is at generation \(mark.generation), this host has seen generation \(seen.generation): an older copy of the database (or of its fleet_meta row) was put back")
    }
}

extension FleetMemory.State {
    /// The newest mark seen.
    var seen: FleetMemory.Mark? { history.last?.mark ?? base }

    /// The newest mark seen before `instant`: what a statement sent then must at least answer.
    /// (The file is read after the open's first statement, which names the store, was sent:
    /// the open's next statement is checked against it.)
    func floor(_ instant: ContinuousClock.Instant) -> FleetMemory.Mark? {
        for entry in history.reversed() where entry.at < instant { return entry.mark }
        return baseAt < instant ? base : nil
    }
}
