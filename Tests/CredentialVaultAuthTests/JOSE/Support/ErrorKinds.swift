@testable import CredentialVaultAuth

/// Which case an error is, without its text: tests that feed many bad inputs check the kind of
/// refusal (a parse error, a bad key), not the wording of each.
extension JOSEError {
    var kind: String {
        switch self {
        case .invalidBase64URL: "invalidBase64URL"
        case .invalidJSON: "invalidJSON"
        case .malformedToken: "malformedToken"
        case .unsupportedAlgorithm: "unsupportedAlgorithm"
        case .invalidKey: "invalidKey"
        case .unknownKeyID: "unknownKeyID"
        case .keyMismatch: "keyMismatch"
        case .badSignature: "badSignature"
        case .signingFailed: "signingFailed"
        }
    }
}

extension IDTokenError {
    var kind: String {
        switch self {
        case .malformed: "malformed"
        case .unsupportedAlgorithm: "unsupportedAlgorithm"
        case .unknownKeyID: "unknownKeyID"
        case .keyMismatch: "keyMismatch"
        case .badSignature: "badSignature"
        case .missingClaim: "missingClaim"
        case .issuerMismatch: "issuerMismatch"
        case .audienceMismatch: "audienceMismatch"
        case .authorizedPartyMismatch: "authorizedPartyMismatch"
        case .expired: "expired"
        case .notYetValid: "notYetValid"
        case .issuedInFuture: "issuedInFuture"
        case .nonceMismatch: "nonceMismatch"
        }
    }
}
