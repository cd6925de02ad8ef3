import CredentialVault
import Foundation

/// Writes bound to the data key's epoch (`FleetSchema`'s guarded statements): each changes
/// rows only while the store's epoch is this store's, in the same statement, so a process
/// that opened the store before a rotation never lands a row sealed with the retired key,
/// never deletes nothing while saying the credential was not there, and gets `locked`
/// (reopen) instead.
extension PostgresStore {
    /// Runs the guarded statement `name` and returns how many rows it changed; `locked` when
    /// the store was rotated since this store was opened. Not retried after a lost connection
    /// unless `retrySafe` (whether it was applied would be unknown).
    func epochBoundWrite(_ name: String, _ sql: String, _ params: [PGParam], retrySafe: Bool = true) throws(CredentialVaultError) -> Int {
        try Self.epochBoundWrite(pool: pool, keyEpoch: keys.keyEpoch, name, sql, params, retrySafe: retrySafe)
    }

    /// The same, for a store being opened (its pool and the epoch of the key it unwrapped).
    static func epochBoundWrite(
        pool: ConnectionPool, keyEpoch: Int64, _ name: String, _ sql: String, _ params: [PGParam], retrySafe: Bool = true
    ) throws(CredentialVaultError) -> Int {
        let result = try pool.withConnection(retrySafe: retrySafe) { (c: PGConnection) throws(PGFailure) -> PGResult in
            try c.query(name, sql, params, deadline: pool.statementDeadline)
        }
        return try changedRows(result, keyEpoch: keyEpoch)
    }

    /// What a guarded statement reported: the rows changed, or `locked` when the store's epoch
    /// is not `keyEpoch` (nothing was changed then).
    static func changedRows(_ result: PGResult, keyEpoch: Int64) throws(CredentialVaultError) -> Int {
        guard result.rowCount == 1, let storeEpoch = result.int8(0, 0) else {
            throw .corrupted("the fleet store's fleet_meta row is missing")
        }
        // A newer epoch is a rotation since this store was opened. An older one (the meta row
        // put back by hand) cannot be written under this key either: reopening shows which.
        guard storeEpoch == keyEpoch else { throw .locked }
        guard let changed = result.int8(0, 1) else { throw .corrupted("the fleet store answered a write without its row count") }
        return Int(changed)
    }

    /// Deletes every expired ephemeral row (on open, and with `listKeys`): `locked` when the
    /// store was rotated since `keyEpoch` was read.
    static func purgeExpired(pool: ConnectionPool, schema: FleetSchema, keyEpoch: Int64, now: Date) throws(CredentialVaultError) {
        let ms = FleetRecord.milliseconds(now)
        _ = try epochBoundWrite(pool: pool, keyEpoch: keyEpoch, "purge", schema.purgeExpired, [.int8(ms), .int8(keyEpoch)])
    }
}
