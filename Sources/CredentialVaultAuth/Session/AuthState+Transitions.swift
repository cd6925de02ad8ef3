import CredentialVault

/// The rules that turn what the session manager learnt from the store into the next state, in
/// one place so that every path (a read, a refresh's end, a reload) publishes the same answer.
extension AuthState {
    /// The state once the store was read and `session` found there (`nil`: nothing stored).
    func afterReading(_ session: AuthSession?) -> AuthState {
        guard let session else { return afterFindingNothing }
        // A refused main refresh of a chain narrowed to a resource stays refused while that
        // session is stored: only a sign-in (which starts a new chain) authenticates again.
        if case .unauthenticated(.refreshRefused) = self, session.refreshChain?.narrowedTo != nil { return self }
        return .authenticated(SessionSummary(session))
    }

    /// Nothing is stored. A session this manager had is gone: signed out (by another client or
    /// process). A reason that already explains the absence (refused, expired, signed out) is
    /// kept; a store problem is replaced, since the store has now answered.
    var afterFindingNothing: AuthState {
        switch self {
        case .authenticated, .refreshing: .unauthenticated(.signedOut)
        case .unauthenticated(let reason) where reason.isStoreProblem: .unauthenticated(.neverSignedIn)
        case .unauthenticated: self
        }
    }

    /// The state once the store failed with `error`; `nil` for a cancellation (the caller gave
    /// up: the store said nothing about the session) and for `busy` (another process holds the
    /// lock to write, so the store is working and the session most probably there).
    static func afterStoreFailure(_ error: CredentialVaultError) -> AuthState? {
        switch error {
        case .cancelled, .busy: nil
        case .locked: .unauthenticated(.storeLocked)
        default: .unauthenticated(.storeFailure(error))
        }
    }
}
