extension CredentialVaultError {
    /// The case's name without its payload (`timedOut`, `permissionDenied`, ...): what log
    /// lines and metric dimensions may show of an error whose message names a path or a
    /// server's words, and a fixed, small vocabulary.
    package var kind: String {
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
