#if Configuration
import CredentialVault

extension CredentialVaultError {
    /// The error's case, for a log record: the messages of some cases name files (a systemd
    /// credential's path is its credential name), so the provider's log shows the case only.
    var reloadFailureLabel: String {
        switch self {
        case .notAvailable: "notAvailable"
        case .locked: "locked"
        case .wrongPassphrase: "wrongPassphrase"
        case .corrupted: "corrupted"
        case .tampered: "tampered"
        case .deviceMismatch: "deviceMismatch"
        case .expired: "expired"
        case .unsupported: "unsupported"
        case .permissionDenied: "permissionDenied"
        case .timedOut: "timedOut"
        case .busy: "busy"
        case .io: "io"
        case .cancelled: "cancelled"
        case .invalidArgument: "invalidArgument"
        case .rolledBack: "rolledBack"
        case .interactionRequired: "interactionRequired"
        case .reopenRequired: "reopenRequired"
        case .alreadyExists: "alreadyExists"
        }
    }
}
#endif
