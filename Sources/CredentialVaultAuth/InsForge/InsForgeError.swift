import CredentialVault

/// Every failure of `InsForgeClient`, named as InsForge's Swift SDK names them. Backend
/// answers keep their `error`, `message` and `nextActions` (redacted); nothing here ever holds
/// a password, code, token or PKCE verifier.
public enum InsForgeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The e-mail address or password is wrong (401 on sign-in).
    case invalidCredentials(InsForgeBackendError)
    /// The account exists but its e-mail address is not verified yet (403 "Email verification
    /// required"): verify it (`verifyEmail(email:code:)` or the emailed link) and sign in again.
    case emailNotVerified(InsForgeBackendError)
    /// The user does not exist (any more).
    case userNotFound(InsForgeBackendError)
    /// An account with this e-mail address exists already (409 on sign-up).
    case emailAlreadyExists(InsForgeBackendError)
    /// The backend is rate limiting (429); `retryAfterSeconds` from `Retry-After` when sent.
    case rateLimited(retryAfterSeconds: Int?, InsForgeBackendError?)
    /// A verification code, reset code, reset token, OAuth code or PKCE verifier was refused:
    /// wrong, expired or already used (the contract says 401, the backend answers 400; both
    /// arrive here).
    case invalidCode(InsForgeBackendError)
    /// The request was not sent because an argument is malformed (the reason says which).
    case invalidInput(String)
    /// The backend could not be reached, the connection broke or the request timed out.
    case networkError(String)
    /// Any other error answer of the backend (400 validation, 403 sign-ups disabled, 5xx, ...).
    case backend(InsForgeBackendError)
    /// A failure of the shared session layer: not signed in, the refresh token refused
    /// (`invalidGrant`, the stored session is then deleted), an OAuth redirect whose `state`
    /// is unknown (`stateMismatch`), a malformed answer, the credential store, cancellation.
    case auth(AuthError)

    /// The backend's error answer, when this error is one.
    public var backendError: InsForgeBackendError? {
        switch self {
        case .invalidCredentials(let body), .emailNotVerified(let body), .userNotFound(let body),
            .emailAlreadyExists(let body), .invalidCode(let body), .backend(let body):
            body
        case .rateLimited(_, let body): body
        case .invalidInput, .networkError, .auth: nil
        }
    }

    /// The backend's `nextActions` hint, when it sent one.
    public var nextActions: String? { backendError?.nextActions }

    /// One line saying what happened and what to do.
    public var description: String {
        switch self {
        case .invalidCredentials(let body): "invalid e-mail or password (\(body))"
        case .emailNotVerified(let body): "the e-mail address is not verified yet: verify it, then sign in (\(body))"
        case .userNotFound(let body): "user not found (\(body))"
        case .emailAlreadyExists(let body): "an account with this e-mail address exists already (\(body))"
        case .rateLimited(let after, let body):
            "the backend is rate limiting requests" + (after.map { ": retry in \($0) s" } ?? ": retry later")
                + (body.map { " (\($0))" } ?? "")
        case .invalidCode(let body): "the code or token is wrong, expired or already used (\(body))"
        case .invalidInput(let why): "invalid input: \(why)"
        case .networkError(let why): "the InsForge backend could not be reached (\(why)): check the URL and the network"
        case .backend(let body): "the InsForge backend refused the request: \(body)"
        case .auth(let error): error.description
        }
    }

    /// The error for a failure of the shared auth layer: transport failures become
    /// `networkError`, a 429 `rateLimited`, everything else `auth`.
    init(_ error: AuthError) {
        switch error {
        case .networkError(let why): self = .networkError(why)
        case .timedOut: self = .networkError("the request timed out")
        case .rateLimited(let after): self = .rateLimited(retryAfterSeconds: after, nil)
        default: self = .auth(error)
        }
    }

    /// The same failure for the session manager, which speaks `AuthError`: definite refusals
    /// of the refresh token become `invalidGrant` (the session is then deleted), transient
    /// ones keep their retryable form.
    var refreshFailure: AuthError {
        switch self {
        case .invalidCredentials(let body), .userNotFound(let body), .invalidCode(let body), .emailNotVerified(let body):
            .invalidGrant(body.message ?? body.error)
        case .backend(let body) where body.statusCode >= 500: .serverUnavailable(status: body.statusCode)
        case .backend(let body) where [400, 401, 403, 404].contains(body.statusCode):
            // 401 (spec) or 400 (backend) for a refresh token that is missing, expired or revoked.
            .invalidGrant(body.message ?? body.error)
        case .backend(let body):
            .providerError(code: body.error ?? "http_\(body.statusCode)", description: body.message)
        case .emailAlreadyExists(let body): .providerError(code: body.error ?? "http_\(body.statusCode)", description: body.message)
        case .rateLimited(let after, _): .rateLimited(retryAfterSeconds: after)
        case .invalidInput(let why): .invalidConfiguration(why)
        case .networkError(let why): .networkError(why)
        case .auth(let error): error
        }
    }
}
