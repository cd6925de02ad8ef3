import CredentialVault
import Foundation

/// A token endpoint's successful answer (RFC 6749 §5.1, OIDC Core §3.1.3.3, RFC 8628 §3.5).
/// Decoding throws `AuthError.invalidResponse` for an `expires_in` that is not a valid lifetime.
struct TokenResponse: Decodable, Sendable {
    var accessToken: String
    var tokenType: String?
    var expiresIn: Double?
    var refreshToken: String?
    var idToken: String?
    var scope: String?

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case scope
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try container.decode(String.self, forKey: .accessToken)
        tokenType = try container.decodeIfPresent(String.self, forKey: .tokenType)
        refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken)
        idToken = try container.decodeIfPresent(String.self, forKey: .idToken)
        scope = try container.decodeIfPresent(String.self, forKey: .scope)
        // A number or a numeric string (some providers quote it); refused when negative or
        // not finite, clamped when huge (ServerNumber).
        expiresIn = try ServerNumber.decode(CodingKeys.expiresIn, in: container).map { value throws(AuthError) in
            try ServerNumber.lifetime(value, field: "expires_in")
        }
    }
}

/// An OAuth error body (RFC 6749 §5.2).
struct OAuthErrorBody: Decodable, Sendable {
    var error: String
    var errorDescription: String?

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
    }

    static func parse(_ data: Data) -> OAuthErrorBody? {
        guard !data.isEmpty else { return nil }
        return try? OutsideJSON.decode(OAuthErrorBody.self, from: data)
    }
}
