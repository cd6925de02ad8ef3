import CredentialVault

/// The cases of `CredentialVaultError` that carry a reason, whatever its text: the predicates
/// `expectThrows` takes (`expectThrows(\CredentialVaultError.isCorrupted) { ... }`). The cases
/// without a payload are checked with `#expect(throws: CredentialVaultError.tampered)`.
extension CredentialVaultError {
    /// `.notAvailable`, whatever its reason.
    package var isNotAvailable: Bool { if case .notAvailable = self { true } else { false } }
    /// `.corrupted`, whatever its reason.
    package var isCorrupted: Bool { if case .corrupted = self { true } else { false } }
    /// `.unsupported`, whatever its reason.
    package var isUnsupported: Bool { if case .unsupported = self { true } else { false } }
    /// `.permissionDenied`, whatever its reason.
    package var isPermissionDenied: Bool { if case .permissionDenied = self { true } else { false } }
    /// `.io`, whatever its reason.
    package var isIO: Bool { if case .io = self { true } else { false } }
    /// `.invalidArgument`, whatever its reason.
    package var isInvalidArgument: Bool { if case .invalidArgument = self { true } else { false } }
    /// `.rolledBack`, whatever its reason.
    package var isRolledBack: Bool { if case .rolledBack = self { true } else { false } }
    /// `.interactionRequired`, whatever its reason.
    package var isInteractionRequired: Bool { if case .interactionRequired = self { true } else { false } }
    /// `.alreadyExists`, whatever it names.
    package var isAlreadyExists: Bool { if case .alreadyExists = self { true } else { false } }
}
