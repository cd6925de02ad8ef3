/// Who is signed in, as the provider described them (ID token claims or the backend's user).
public struct AuthUser: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The stable identifier (`sub`, or the backend's user id).
    public var subject: String
    /// The display name, if known.
    public var name: String?
    /// The e-mail address, if known.
    public var email: String?
    /// Other string claims worth keeping (`preferred_username`, ...).
    public var attributes: [String: String]

    /// Creates a user.
    public init(subject: String, name: String? = nil, email: String? = nil, attributes: [String: String] = [:]) {
        self.subject = subject
        self.name = name
        self.email = email
        self.attributes = attributes
    }

    /// The subject, and the e-mail address when known.
    public var description: String { email.map { "\(subject) <\($0)>" } ?? subject }
}
