@testable import CredentialVaultAuth

extension AuthState {
    /// The state without the session's expiry (which a refresh changes): its case, the user's
    /// subject, the reason. For comparing sequences of states.
    var shape: String {
        switch self {
        case .authenticated(let summary): "authenticated(\(summary.user?.subject ?? "-"))"
        case .refreshing: "refreshing"
        case .unauthenticated(let reason): "unauthenticated(\(reason))"
        }
    }
}
