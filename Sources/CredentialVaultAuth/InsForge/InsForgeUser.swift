import Foundation

/// A user as the InsForge backend describes one (`UserResponse`).
public struct InsForgeUser: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The user id (a UUID).
    public var id: String
    /// The e-mail address.
    public var email: String
    /// Profile data: `name`, `avatar_url` and any custom fields.
    public var profile: [String: JSONValue]?
    /// System metadata (device, login IP, ...).
    public var metadata: [String: JSONValue]?
    /// Whether the e-mail address is verified.
    public var emailVerified: Bool
    /// How the user signs in (`email`, `google`, ...).
    public var providers: [String]
    /// When the account was created.
    public var createdAt: Date?
    /// When the account was last changed.
    public var updatedAt: Date?

    /// Creates a user.
    public init(
        id: String, email: String, profile: [String: JSONValue]? = nil, metadata: [String: JSONValue]? = nil,
        emailVerified: Bool = false, providers: [String] = [], createdAt: Date? = nil, updatedAt: Date? = nil
    ) {
        self.id = id
        self.email = email
        self.profile = profile
        self.metadata = metadata
        self.emailVerified = emailVerified
        self.providers = providers
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// The profile's `name`, if it has one.
    public var name: String? { profile?["name"]?.stringValue }

    /// The user as the session layer keeps it (id as subject, name, e-mail, verification state
    /// and providers as attributes).
    public var authUser: AuthUser {
        AuthUser(
            subject: id, name: name, email: email,
            attributes: ["emailVerified": emailVerified ? "true" : "false", "providers": providers.joined(separator: ",")])
    }

    /// The id and e-mail address.
    public var description: String { "\(id) <\(email)>" }

    enum CodingKeys: String, CodingKey {
        case id, email, profile, metadata, emailVerified, providers, createdAt, updatedAt
    }

    /// Decodes a `UserResponse`; absent optional members take their defaults and timestamps
    /// are RFC 3339 (with or without fractional seconds).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        email = try container.decode(String.self, forKey: .email)
        profile = try container.decodeIfPresent([String: JSONValue].self, forKey: .profile)
        metadata = try container.decodeIfPresent([String: JSONValue].self, forKey: .metadata)
        emailVerified = try container.decodeIfPresent(Bool.self, forKey: .emailVerified) ?? false
        providers = try container.decodeIfPresent([String].self, forKey: .providers) ?? []
        createdAt = try container.decodeIfPresent(String.self, forKey: .createdAt).flatMap(InsForgeTimestamp.parse)
        updatedAt = try container.decodeIfPresent(String.self, forKey: .updatedAt).flatMap(InsForgeTimestamp.parse)
    }

    /// Encodes as a `UserResponse` (timestamps in RFC 3339).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(email, forKey: .email)
        try container.encodeIfPresent(profile, forKey: .profile)
        try container.encodeIfPresent(metadata, forKey: .metadata)
        try container.encode(emailVerified, forKey: .emailVerified)
        try container.encode(providers, forKey: .providers)
        try container.encodeIfPresent(createdAt.map(InsForgeTimestamp.format), forKey: .createdAt)
        try container.encodeIfPresent(updatedAt.map(InsForgeTimestamp.format), forKey: .updatedAt)
    }
}

/// RFC 3339 timestamps as the backend writes them (JavaScript's `toISOString()`).
enum InsForgeTimestamp {
    static func parse(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
