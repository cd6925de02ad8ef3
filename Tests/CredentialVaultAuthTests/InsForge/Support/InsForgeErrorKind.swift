@testable import CredentialVaultAuth

extension InsForgeError {
    /// Which case this is, without its payload: tests check the kind of refusal (a wrong
    /// password, a used code), not the backend's wording.
    var kind: String {
        switch self {
        case .invalidCredentials: "invalidCredentials"
        case .emailNotVerified: "emailNotVerified"
        case .userNotFound: "userNotFound"
        case .emailAlreadyExists: "emailAlreadyExists"
        case .rateLimited: "rateLimited"
        case .invalidCode: "invalidCode"
        case .invalidInput: "invalidInput"
        case .networkError: "networkError"
        case .backend: "backend"
        case .auth: "auth"
        }
    }
}
