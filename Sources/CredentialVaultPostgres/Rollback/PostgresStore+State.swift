import CredentialVault
import Foundation

/// The store's state as every read sees it: its key epoch, its store-wide generation and the
/// seal of both (docs/FLEET.md, *Rollback*).
struct FleetState: Sendable {
    let epoch: Int64
    let generation: Int64
    /// `nil` in a store made before the seal, until its first write.
    let seal: Data?
    /// When the statement that read it was sent (an older state than one seen before then is a
    /// rollback; one seen after may be newer than its snapshot).
    let askedAt: ContinuousClock.Instant

    init(epoch: Int64, generation: Int64, seal: Data?, askedAt: ContinuousClock.Instant = .now) {
        self.epoch = epoch
        self.generation = generation
        self.seal = seal
        self.askedAt = askedAt
    }

    /// The state in columns `epoch`, `generation` and `seal` of row `row`; `corrupted` when the
    /// meta row is missing.
    init(
        _ result: PGResult, row: Int = 0, epoch: Int, generation: Int, seal: Int, askedAt: ContinuousClock.Instant
    ) throws(CredentialVaultError) {
        guard result.rowCount > row, let e = result.int8(row, epoch), let g = result.int8(row, generation) else {
            throw .corrupted("the fleet store's fleet_meta row is missing")
        }
        self.epoch = e
        self.generation = g
        self.seal = result.bytes(row, seal)
        self.askedAt = askedAt
    }

    var mark: FleetMemory.Mark { FleetMemory.Mark(epoch: epoch, generation: generation) }
}

extension PostgresStore {
    /// Checks a state read from the server before anything read with it is believed or written
    /// on top of: a newer epoch is a rotation (`reopenRequired`); an older epoch, or an older
    /// generation than this host has seen, is an older copy of the database put back
    /// (`rolledBack`); a generation its seal does not match was moved without the data key (a
    /// row inserted, edited or deleted by hand: `tampered`). Remembers the state when newer.
    func verify(_ state: FleetState) throws(CredentialVaultError) {
        if state.epoch > keys.keyEpoch { throw .reopenRequired(.keyChanged) }
        try Self.verify(state, keys: keys, memory: memory)
    }

    /// The same for a store being opened (`force` writes the memory out at once).
    static func verify(_ state: FleetState, keys: FleetKeys, memory: FleetMemory, force: Bool = false) throws(CredentialVaultError) {
        guard state.epoch == keys.keyEpoch else {
            // Older than the key in hand: the meta row was put back (this host saw the epoch
            // of its key, so its memory words it).
            try memory.observe(state.mark, askedAt: state.askedAt)
            throw .rolledBack("the fleet store's fleet_meta row is at key epoch \(state.epoch), older than this host's key (\(keys.keyEpoch)): it was put back")
        }
        guard let seal = state.seal else {
            // Only a store made before the seal has none (its first write seals it): nothing to
            // remember yet. A host that has seen it sealed refuses it.
            guard memory.seen == nil else {
                throw .rolledBack("the fleet store's state seal is missing, and this host has seen it sealed: fleet_meta was put back or edited")
            }
            return
        }
        guard keys.isStateSeal(seal, generation: state.generation) else { throw .tampered }
        try memory.observe(state.mark, askedAt: state.askedAt, force: force)
    }

    /// What a sealed write did.
    enum SealedWriteOutcome {
        /// It was made over the state given, changing this many rows (0: its own condition,
        /// such as the row version, did not hold).
        case changed(Int)
        /// Another write moved the generation first: nothing was changed; this is the state now
        /// (verified), to retry on.
        case moved(to: FleetState)
    }

    /// Runs a sealed write (`FleetSchema.sealedWrite`) made over `state`; `reopenRequired` after a
    /// rotation. The seal it left is remembered as seen.
    ///
    /// `params` are the statement's own; the generation read and the seal of the state after
    /// `rows` changes follow them (its last two parameters).
    func sealedWrite(
        _ name: String, _ sql: String, _ params: [PGParam], over state: FleetState, changing rows: Int64 = 1, retrySafe: Bool = true
    ) throws(CredentialVaultError) -> SealedWriteOutcome {
        let bound = params + [.int8(state.generation), .bytes(keys.stateSeal(generation: state.generation + rows))]
        let askedAt = ContinuousClock.now
        let result = try pool.withConnection(retrySafe: retrySafe) { (c: PGConnection) throws(PGFailure) -> PGResult in
            try c.query(name, sql, bound, deadline: pool.statementDeadline)
        }
        let changed = try Self.changedRows(result, keyEpoch: keys.keyEpoch)
        guard let before = result.int8(0, 2) else { throw .corrupted("the fleet store answered a write without its generation") }
        guard before == state.generation else {
            let current = FleetState(epoch: keys.keyEpoch, generation: before, seal: result.bytes(0, 3), askedAt: askedAt)
            try verify(current)
            return .moved(to: current)
        }
        if changed > 0 {
            // Exactly this write's rows moved the generation (it held the meta row from its
            // check to its commit).
            try? memory.observe(FleetMemory.Mark(epoch: keys.keyEpoch, generation: state.generation + Int64(changed)), askedAt: .now)
        }
        return .changed(changed)
    }

    /// Makes `state` (read by the open) the one this host remembers, even if older than what it
    /// saw (a deliberate restore). A seal that does not match (rows changed without the key, a
    /// write by a host from before the seal) is replaced by this state's, over exactly this
    /// epoch and generation: the administrator accepts the database as it is. `reopenRequired` when a
    /// write or rotation moved it since it was read (the open reads it again).
    func accept(_ state: FleetState) throws(CredentialVaultError) {
        guard state.epoch == keys.keyEpoch else { throw .reopenRequired(.keyChanged) }
        if state.seal.map({ !keys.isStateSeal($0, generation: state.generation) }) ?? true {
            let result = try pool.withConnection { (c: PGConnection) throws(PGFailure) -> PGResult in
                try c.queryUnprepared(
                    schema.resealState, [.bytes(keys.stateSeal(generation: state.generation)), .int8(state.epoch), .int8(state.generation)],
                    deadline: pool.statementDeadline)
            }
            guard result.affectedRows == 1 else { throw .reopenRequired(.keyChanged) }
        }
        try memory.accept(state.mark, key: FleetMemory.KnownKey(epoch: keys.keyEpoch, verifyKey: keys.verifyKey))
    }

    /// Checks that the data key an open unwrapped is the store's as this host knows it: the
    /// key it knew, or one a chain of signed rotations leads to from it (`tampered` otherwise:
    /// a wrapping put in by someone without the fleet's keys, as anyone can seal one to a public
    /// key). A host that knows no key yet believes the first (written down in docs/FLEET.md).
    static func checkKey(_ keys: FleetKeys, chain: Data?, memory: FleetMemory) throws(CredentialVaultError) {
        if let known = memory.knownKey {
            // An older epoch than the one known: the state's check says `rolledBack`.
            guard known.epoch <= keys.keyEpoch else { return }
            guard try FleetKeyChain(chain).leads(from: known, to: keys) else { throw .tampered }
        }
        memory.remember(FleetMemory.KnownKey(epoch: keys.keyEpoch, verifyKey: keys.verifyKey))
    }
}
