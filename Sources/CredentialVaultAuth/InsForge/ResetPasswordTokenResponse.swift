import Foundation

/// A reset token obtained for a 6-digit reset code (`exchangeResetPasswordToken`), to pass to
/// `resetPassword(otp:newPassword:)`. `description` never shows the token.
public struct ResetPasswordTokenResponse: Sendable, Equatable, Decodable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The reset token.
    public let token: String
    /// When it expires, if the backend said so.
    public let expiresAt: Date?

    /// Creates a response.
    public init(token: String, expiresAt: Date?) {
        self.token = token
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case token, expiresAt
    }

    /// Decodes `{"token", "expiresAt"}` (an RFC 3339 timestamp).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        token = try container.decode(String.self, forKey: .token)
        expiresAt = try container.decodeIfPresent(String.self, forKey: .expiresAt).flatMap(InsForgeTimestamp.parse)
    }

    /// The expiry; the token is redacted.
    public var description: String {
        "ResetPasswordTokenResponse(expiresAt: \(expiresAt.map { "\($0)" } ?? "unknown"), token redacted)"
    }

    /// Same as `description`.
    public var debugDescription: String { description }
}
