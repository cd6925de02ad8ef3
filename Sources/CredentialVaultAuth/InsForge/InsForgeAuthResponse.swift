/// A successful sign-in (password, verified e-mail code, OAuth exchange): the user and the
/// tokens, already stored as the client's session. `description` never shows a token.
public struct InsForgeAuthResponse: Sendable, Equatable, Decodable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Who signed in (the backend may omit it; then `nil`).
    public let user: InsForgeUser?
    /// The access token (a JWT).
    public let accessToken: String
    /// The refresh token (sent to desktop and server clients).
    public let refreshToken: String?

    /// Creates a response.
    public init(user: InsForgeUser?, accessToken: String, refreshToken: String?) {
        self.user = user
        self.accessToken = accessToken
        self.refreshToken = refreshToken
    }

    /// The user, tokens redacted.
    public var description: String {
        "InsForgeAuthResponse(user: \(user?.description ?? "unknown"), refreshToken: \(refreshToken == nil ? "none" : "present"), tokens redacted)"
    }

    /// Same as `description`.
    public var debugDescription: String { description }
}
