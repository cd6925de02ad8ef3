/// The answer to `signUp`: either a session (no verification needed; it is stored) or the
/// news that the e-mail address must be verified first (by code or link) before signing in.
/// `description` never shows a token.
public struct SignUpResponse: Sendable, Equatable, Decodable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The new user (the backend omits it when verification is required; the contract lists it).
    public let user: InsForgeUser?
    /// The access token; `nil` when the e-mail address must be verified first.
    public let accessToken: String?
    /// The refresh token; `nil` when the e-mail address must be verified first.
    public let refreshToken: String?
    /// Whether the project requires a verified e-mail address before sign-in.
    public let requireEmailVerification: Bool

    /// Creates a response.
    public init(user: InsForgeUser?, accessToken: String?, refreshToken: String?, requireEmailVerification: Bool) {
        self.user = user
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.requireEmailVerification = requireEmailVerification
    }

    /// The user must verify the e-mail address (code: `verifyEmail(email:code:)`; link: click
    /// it, then `signIn`) before there is a session.
    public var needsEmailVerification: Bool { requireEmailVerification && accessToken == nil }

    /// Whether the sign-up signed the user in (a session was stored).
    public var hasSession: Bool { accessToken != nil }

    enum CodingKeys: String, CodingKey {
        case user, accessToken, refreshToken, requireEmailVerification
    }

    /// Decodes both the contract's shape and the backend's shorter one for a sign-up that
    /// needs verification (`{"accessToken": null, "requireEmailVerification": true}`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        user = try container.decodeIfPresent(InsForgeUser.self, forKey: .user)
        accessToken = try container.decodeIfPresent(String.self, forKey: .accessToken)
        refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken)
        requireEmailVerification = try container.decodeIfPresent(Bool.self, forKey: .requireEmailVerification) ?? false
    }

    /// The outcome, tokens redacted.
    public var description: String {
        "SignUpResponse(user: \(user?.description ?? "not sent"), hasSession: \(hasSession), "
            + "needsEmailVerification: \(needsEmailVerification), tokens redacted)"
    }

    /// Same as `description`.
    public var debugDescription: String { description }
}
