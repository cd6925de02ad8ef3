@testable import CredentialVaultAuth

/// The cases of `AuthError` whatever their reason text, for tests that check the kind of
/// failure where the wording is the product's business.
extension AuthError {
    /// `.invalidGrant`, whatever its reason.
    var isInvalidGrant: Bool {
        if case .invalidGrant = self { return true }
        return false
    }

    /// `.invalidConfiguration`, whatever its reason.
    var isInvalidConfiguration: Bool {
        if case .invalidConfiguration = self { return true }
        return false
    }
}
