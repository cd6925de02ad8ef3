import CredentialVault

/// The sign-in state the session manager publishes. It says why nobody is signed in, so that an
/// app never shows "signed out" for a session that is merely unreachable (a locked keyring).
///
/// Not frozen, under `CredentialVaultError`'s compatibility rule: a minor release may add a
/// case; end a `switch` with `default:`.
public enum AuthState: Sendable, Hashable, CustomStringConvertible {
    /// A session is stored: who it belongs to and when its access token expires (no tokens).
    case authenticated(SessionSummary)
    /// A refresh is in progress.
    case refreshing
    /// No session is usable, and why.
    case unauthenticated(UnauthenticatedReason)

    /// A short description (the user's subject and the expiry, no tokens).
    public var description: String {
        switch self {
        case .authenticated(let summary): "authenticated(\(summary))"
        case .refreshing: "refreshing"
        case .unauthenticated(let reason): "unauthenticated(\(reason))"
        }
    }

    /// The session summary when authenticated.
    public var session: SessionSummary? {
        if case .authenticated(let summary) = self { return summary }
        return nil
    }
}

/// Why the session manager has no usable session. Not frozen, as `AuthState`.
public enum UnauthenticatedReason: Sendable, Hashable, CustomStringConvertible {
    /// Nothing was stored when the manager looked: never signed in, or signed out in an earlier
    /// run (or by another process before this manager first looked; a sign-out is not recorded
    /// anywhere once the session is deleted).
    case neverSignedIn
    /// Signed out through this manager, or the stored session disappeared while this manager
    /// had it (another client or process sharing the store signed out).
    case signedOut
    /// The provider refused the refresh token (`invalid_grant`): the session was deleted; the
    /// user has to sign in again.
    case refreshRefused
    /// The access token expired and there was no refresh token to renew it: the session was deleted.
    case expired
    /// The store is locked (a locked keyring): the session may well be there. Unlock it, then
    /// call `SessionManager.reload()` (or any call that reads the session).
    case storeLocked
    /// The store failed otherwise (not reachable, timed out, corrupted, ...): the session may
    /// well be there. Retry with `SessionManager.reload()` once the cause is fixed. For
    /// `reopenRequired` (another process rotated the vault's key, moved it or replaced it) the
    /// store object the manager holds stays stale: make a new manager over the store opened again.
    case storeFailure(CredentialVaultError)

    /// A short description.
    public var description: String {
        switch self {
        case .neverSignedIn: "never signed in"
        case .signedOut: "signed out"
        case .refreshRefused: "refresh refused"
        case .expired: "expired"
        case .storeLocked: "store locked"
        case .storeFailure(let error): "store failure: \(error)"
        }
    }

    /// Whether the reason is the store's (locked or failing) rather than the session's: the
    /// session may still be stored.
    public var isStoreProblem: Bool {
        switch self {
        case .storeLocked, .storeFailure: true
        default: false
        }
    }
}
