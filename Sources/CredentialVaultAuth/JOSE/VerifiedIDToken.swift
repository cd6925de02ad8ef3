import Foundation

/// The claims of an ID token that passed every check of `IDTokenValidator`.
///
/// Codable so that the session manager can store the signed-in user. It does not keep the
/// token itself.
public struct VerifiedIDToken: Sendable, Equatable, Codable {
    /// `sub`: the provider's stable identifier for the user.
    public let subject: String
    /// `iss`.
    public let issuer: String
    /// `aud`, normalised to an array.
    public let audience: [String]
    /// `azp`, if present.
    public let authorizedParty: String?
    /// `exp`.
    public let expiresAt: Date
    /// `iat`.
    public let issuedAt: Date
    /// `auth_time`, if present as a number.
    public let authenticatedAt: Date?
    /// `nonce`, if present.
    public let nonce: String?
    /// `email`, if present as a string.
    public let email: String?
    /// `email_verified`, if present as a Boolean (or the strings "true"/"false").
    public let emailVerified: Bool?
    /// `name`, if present as a string.
    public let name: String?
    /// `preferred_username`, if present as a string.
    public let preferredUsername: String?
    /// The algorithm that signed the token.
    public let algorithm: JWSAlgorithm
    /// The `kid` of the key that verified it, if the key had one.
    public let keyID: String?
    /// Every claim, as parsed (all covered by the verified signature).
    public let claims: [String: JSONValue]

    /// Creates the value; used by `IDTokenValidator` and by tests.
    public init(
        subject: String, issuer: String, audience: [String], authorizedParty: String?, expiresAt: Date,
        issuedAt: Date, authenticatedAt: Date?, nonce: String?, algorithm: JWSAlgorithm, keyID: String?,
        claims: [String: JSONValue]
    ) {
        self.subject = subject
        self.issuer = issuer
        self.audience = audience
        self.authorizedParty = authorizedParty
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.authenticatedAt = authenticatedAt
        self.nonce = nonce
        self.algorithm = algorithm
        self.keyID = keyID
        self.claims = claims
        self.email = claims["email"]?.stringValue
        self.name = claims["name"]?.stringValue
        self.preferredUsername = claims["preferred_username"]?.stringValue
        switch claims["email_verified"] {
        case .bool(let value)?: self.emailVerified = value
        case .string("true")?: self.emailVerified = true
        case .string("false")?: self.emailVerified = false
        default: self.emailVerified = nil
        }
    }
}
