import CredentialVault
import Foundation

/// Writes bound to the data key's epoch (`FleetSchema`'s guarded and sealed statements): each
/// changes rows only while the store's epoch is this store's, in the same statement, so a
/// process that opened the store before a rotation never lands a row sealed with the retired
/// key, never deletes nothing while saying the credential was not there, and gets `reopenRequired`
/// (reopen) instead.
extension PostgresStore {
    /// What a guarded statement reported: the rows changed, or `reopenRequired(.keyChanged)` when the store's epoch
    /// is not `keyEpoch` (nothing was changed then).
    static func changedRows(_ result: PGResult, keyEpoch: Int64) throws(CredentialVaultError) -> Int {
        guard result.rowCount == 1, let storeEpoch = result.int8(0, 0) else {
            throw .corrupted("the fleet store's fleet_meta row is missing")
        }
        // A newer epoch is a rotation since this store was opened. An older one (the meta row
        // put back by hand) cannot be written under this key either: reopening shows which.
        guard storeEpoch == keyEpoch else { throw .reopenRequired(.keyChanged) }
        guard let changed = result.int8(0, 1) else { throw .corrupted("the fleet store answered a write without its row count") }
        return Int(changed)
    }

    /// Deletes the rows a bulk statement matches (every row, or the ephemeral ones expired at
    /// `expiredAt`): counts them with the state in one snapshot, then deletes them over that
    /// state, sealing the state after that many; counts again when another write came in
    /// between. Nothing to delete: no write at all. Returns how many rows were deleted.
    func deleteCounted(_ name: String, _ sql: String, _ params: [PGParam], expiredAt: Int64?) throws(CredentialVaultError) -> Int {
        for _ in 0..<Self.maxRounds {
            let askedAt = ContinuousClock.now
            let result = try pool.withConnection { (c: PGConnection) throws(PGFailure) -> PGResult in
                try c.query("count", schema.countForDelete, [expiredAt.map { .int8($0) } ?? .nullInt8], deadline: pool.statementDeadline)
            }
            let state = try FleetState(result, epoch: 0, generation: 1, seal: 2, askedAt: askedAt)
            try verify(state)
            guard let rows = result.int8(0, 3) else { throw .corrupted("the fleet store answered a count without a number") }
            if rows == 0 { return 0 }
            // Another write in between: count again.
            if case .changed(let changed) = try sealedWrite(name, sql, params, over: state, changing: rows) { return changed }
        }
        throw .busy
    }

    /// Deletes every expired ephemeral row (on open, and with `listKeys`): `reopenRequired` when the
    /// store was rotated since this store was opened.
    func purgeExpired() throws(CredentialVaultError) {
        let ms = FleetRecord.milliseconds(configuration.clock.now())
        _ = try deleteCounted("purge", schema.purgeExpired, [.int8(ms), .int8(keys.keyEpoch)], expiredAt: ms)
    }
}
