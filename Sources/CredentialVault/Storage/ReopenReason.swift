/// Why a store object must be opened again (`CredentialVaultError.reopenRequired`): what another
/// process or fleet host changed under it. Each calls for the same action (open the store again);
/// the reason is for the log line, and for callers that react differently to a key change
/// (re-read a key the user just changed elsewhere) than to a vault swapped on disk.
///
/// The same compatibility rule as `CredentialVaultError`: a minor release may add a reason, so a
/// `switch` over it ends with `default:`.
public enum ReopenReason: Sendable, Hashable, CustomStringConvertible {
    /// The vault's data key was rotated (`rotateDataKey`, `credvault rotate`, `credvault fleet
    /// rotate`), or its secret changed while this object was preparing a rewrap of its own
    /// (`changeCustody`): the keys or the wrapping this object holds are not the vault's now. (A
    /// secret changed elsewhere keeps the data key: this object's reads and saves go on.)
    case keyChanged
    /// The vault was moved to another custodian of its device key, or its rollback counter was
    /// added or removed (`changeCustody`): this object checks it against the wrong custodian.
    case custodyChanged
    /// Another file took the vault's path (a restore from a backup, another vault moved or
    /// created there), even while this object held the vault's lock: it was left as it is, and
    /// this object's state is not the file's any more.
    case replaced

    /// What happened, as part of a sentence.
    public var description: String {
        switch self {
        case .keyChanged: "the vault's key was changed or rotated by another process"
        case .custodyChanged: "the vault was moved to another custodian (or its rollback counter added or removed) by another process"
        case .replaced: "another file replaced the vault at its path (a restore from a backup, another vault)"
        }
    }
}
