/// A user's profile (`ProfileResponse`).
public struct InsForgeProfile: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The user id.
    public var id: String
    /// Profile data: `name`, `avatar_url` and any custom fields.
    public var profile: [String: JSONValue]?

    /// Creates a profile.
    public init(id: String, profile: [String: JSONValue]?) {
        self.id = id
        self.profile = profile
    }

    /// The id and the profile's field names.
    public var description: String { "InsForgeProfile(\(id), fields: \((profile ?? [:]).keys.sorted()))" }
}
