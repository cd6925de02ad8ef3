/// The one error type of the storage layer. Every message says what to do next and never
/// contains a secret (no values, passphrases or key material; reasons are fixed phrases).
///
/// A missing credential is not an error (`load` returns `nil`); a locked store is never
/// reported as a missing credential.
public enum CredentialVaultError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The backend cannot be reached (no D-Bus session, no Secret Service provider, ...).
    case notAvailable(String)
    /// The store is locked; unlock it (or open the vault with its key) and retry.
    case locked
    /// The passphrase, key file or device key does not unlock this vault.
    case wrongPassphrase
    /// The data is damaged (truncated, malformed, out-of-range parameters).
    case corrupted(String)
    /// Authentication failed: the data was modified, swapped or moved from another vault.
    case tampered
    /// A device-only credential was sealed on another machine and cannot be opened here.
    case deviceMismatch
    /// An ephemeral credential outlived its time to live; it has been purged.
    case expired
    /// The backend cannot honour the request (an option, a format version, an operation).
    case unsupported(String)
    /// The operating system refused access, or a file or directory has unsafe permissions.
    case permissionDenied(String)
    /// The backend did not answer within its deadline.
    case timedOut
    /// Another process holds the vault's lock beyond the bounded wait.
    case busy
    /// A read or write failed (disk full, read-only file system, ...); the previous state is intact.
    case io(String)
    /// The task waiting for the operation was cancelled (`Task.cancel()`). Nothing was changed
    /// when the operation was still waiting (for a lock, or its turn); one already under way
    /// was completed first or interrupted, as the backend documents (`AsyncTokenStorageAdapter`).
    case cancelled
    /// The caller passed something invalid (an empty service, a non-UTF-8 string value, ...).
    case invalidArgument(String)
    /// The vault is older than its rollback counter (an older copy was put back: a backup
    /// restore, a snapshot, an attacker), or the counter disagrees with it. Nothing was read or
    /// changed; a deliberate restore is accepted with `SealedFileStore.acceptRestore`
    /// (`credvault accept-restore`).
    case rolledBack(String)
    /// The backend can go on only once a person answers it (a Secret Service provider asks in a
    /// dialog to confirm a program's access, or to unlock), and the caller did not allow
    /// interaction; nothing was changed by the step that asked. The message says what was asked
    /// and how to allow it (`SecretServiceConfiguration.allowsInteraction`, `credvault --interactive`).
    case interactionRequired(String)

    /// One line saying what happened and what to do.
    public var description: String {
        switch self {
        case .notAvailable(let why): "credential store not available: \(why)"
        case .locked: "the credential store is locked: unlock it and retry"
        case .wrongPassphrase: "wrong passphrase or key: the vault was not opened and nothing was changed"
        case .corrupted(let why): "the vault data is corrupted (\(why)): restore it from a backup"
        case .tampered:
            "the vault failed authentication: it was modified or is not the vault it claims to be; restore it from a backup"
        case .deviceMismatch:
            "this credential is device-only and was sealed on another machine; it can only be read there"
        case .expired: "this ephemeral credential has expired and was removed: start the operation again"
        case .unsupported(let why): "unsupported: \(why)"
        case .permissionDenied(let why): "permission denied: \(why)"
        case .timedOut: "the credential store did not answer in time: check that it is running and retry"
        case .busy: "the vault is locked by another process beyond the wait: retry later or stop that process"
        case .io(let why): "input/output error: \(why)"
        case .cancelled: "the operation was cancelled"
        case .invalidArgument(let why): "invalid argument: \(why)"
        case .rolledBack(let why):
            "the vault was rolled back (\(why)): a revoked or used credential could come back, so it was not opened; if you restored it from a backup on purpose, run `credvault accept-restore`"
        case .interactionRequired(let why): "a person must answer the credential store first: \(why)"
        }
    }
}
