/// The sign-in state the session manager publishes.
public enum AuthState: Sendable, Hashable, CustomStringConvertible {
    /// A session is stored; the user, when the provider described one.
    case authenticated(AuthUser?)
    /// A refresh is in progress.
    case refreshing
    /// No session is stored (never signed in, signed out, or the refresh token was rejected).
    case unauthenticated

    /// A short description (the user's subject, no tokens).
    public var description: String {
        switch self {
        case .authenticated(let user): "authenticated(\(user?.description ?? "unknown user"))"
        case .refreshing: "refreshing"
        case .unauthenticated: "unauthenticated"
        }
    }
}
