import CredentialVault

/// The fleet store's conditions in its own words. `CredentialVaultError.description` speaks of
/// a vault (a sealed file: "restore it from a backup", "locked by another process", "unlock
/// it"), which misleads for a shared database: one row changed by hand, a PostgreSQL lock, a
/// rotated data key.
extension PostgresStore {
    /// `error`, raised by a fleet store, as one line that says what happened and what to do
    /// (never a secret: the errors carry none). Conditions the common wording fits keep it.
    public static func describe(_ error: CredentialVaultError) -> String {
        switch error {
        case .reopenRequired:
            "the fleet store's data key was rotated (credvault fleet rotate) after this process opened it: nothing was changed; "
                + "open the store again (run the command again) to use the new key"
        case .tampered:
            "a row of the fleet store, or its state seal, failed authentication (changed in the database, copied from elsewhere, "
                + "sealed with a key this fleet does not hold, or rows inserted or deleted without the data key): nothing was changed; "
                + "a database administrator must delete or restore what was changed"
        case .rolledBack(let why):
            "\(why); nothing was read or changed. If the database was restored from a backup on purpose, run credvault fleet "
                + "accept-restore on this host (credentials revoked, taken or changed since that copy are back); otherwise the "
                + "database administrator restores the newer state"
        case .corrupted(let why):
            "the fleet store is damaged (\(why)): a database administrator must repair it or restore the database"
        case .busy:
            "the fleet store waited past its lock timeout for a PostgreSQL lock held by another session (a long write, a "
                + "rotation, the fleet-wide lock, or an administrator's transaction): retry"
        case .timedOut:
            "PostgreSQL did not answer the fleet store before its deadline: check the server and the network, and retry"
        case .wrongPassphrase:
            "this host's fleet key (its key file or passphrase) does not unwrap the fleet store's data key: nothing was opened "
                + "or changed"
        default:
            error.description
        }
    }
}
