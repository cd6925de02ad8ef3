extension CredentialVaultError {
    /// The case's name without its payload (`"locked"`, `"permissionDenied"`): for a log record or
    /// a test's outcome where the message must not appear (some messages name files, and a file
    /// can be a credential's name).
    package var caseName: String {
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
        case .invalidArgument: "invalidArgument"
        case .cancelled: "cancelled"
        case .rolledBack: "rolledBack"
        case .interactionRequired: "interactionRequired"
        case .reopenRequired: "reopenRequired"
        case .alreadyExists: "alreadyExists"
        }
    }
}
