extension AuthError {
    /// The case's name without its payload (`invalidGrant`, `networkError`, ...): what a metric
    /// dimension may show of a failure (a small, fixed vocabulary; the payloads hold provider
    /// texts). A storage failure is `storage`, whatever the store's error.
    package var kind: String {
        switch self {
        case .invalidCredentials: "invalidCredentials"
        case .invalidGrant: "invalidGrant"
        case .stateMismatch: "stateMismatch"
        case .nonceMismatch: "nonceMismatch"
        case .invalidIDToken: "invalidIDToken"
        case .networkError: "networkError"
        case .timedOut: "timedOut"
        case .serverUnavailable: "serverUnavailable"
        case .rateLimited: "rateLimited"
        case .providerError: "providerError"
        case .accessDenied: "accessDenied"
        case .authorizationExpired: "authorizationExpired"
        case .notSignedIn: "notSignedIn"
        case .invalidResponse: "invalidResponse"
        case .discoveryFailed: "discoveryFailed"
        case .unsupported: "unsupported"
        case .invalidConfiguration: "invalidConfiguration"
        case .tokenLifetimeTooShort: "tokenLifetimeTooShort"
        case .pushedAuthorizationRequired: "pushedAuthorizationRequired"
        case .pushedAuthorizationRefused: "pushedAuthorizationRefused"
        case .invalidTarget: "invalidTarget"
        case .resourceRefreshWouldNarrow: "resourceRefreshWouldNarrow"
        case .refreshTokenNarrowed: "refreshTokenNarrowed"
        case .insufficientScope: "insufficientScope"
        case .cancelled: "cancelled"
        case .storage: "storage"
        }
    }
}
