import Foundation

/// One challenge of a `WWW-Authenticate` header (RFC 9110 §11.6.1), as a resource server sends
/// it with a 401 or 403: `Bearer` (RFC 6750 §3) or `DPoP` (RFC 9449 §7.1), with the RFC 9728
/// `resource_metadata` parameter.
public struct AuthenticationChallenge: Sendable, Hashable {
    /// The scheme as sent (`Bearer`, `DPoP`, ...); compare with `isScheme(_:)`.
    public var scheme: String
    /// The auth-params, names in lower case, quoted strings unescaped.
    public var parameters: [String: String]
    /// A token68 credential instead of parameters (rare in challenges).
    public var token68: String?

    /// Creates a challenge.
    public init(scheme: String, parameters: [String: String] = [:], token68: String? = nil) {
        self.scheme = scheme
        self.parameters = parameters
        self.token68 = token68
    }

    /// Whether the scheme is `name` (schemes are case-insensitive).
    public func isScheme(_ name: String) -> Bool { scheme.lowercased() == name.lowercased() }

    /// The OAuth error (`invalid_token`, `insufficient_scope`, `use_dpop_nonce`, ...).
    public var error: String? { parameters["error"] }
    /// The error's human-readable description (provider text: redact before showing).
    public var errorDescription: String? { parameters["error_description"] }
    /// The `realm`.
    public var realm: String? { parameters["realm"] }
    /// The scopes the resource asks for (`scope`, space separated), empty when absent.
    public var scopes: [String] { parameters["scope"].map { $0.split(separator: " ").map(String.init) } ?? [] }
    /// The RFC 9728 protected resource metadata URL, when present and an absolute http(s) URL.
    public var resourceMetadata: URL? {
        guard let text = parameters["resource_metadata"], let url = URL(string: text),
            let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http", url.host?.isEmpty == false
        else { return nil }
        return url
    }
    /// DPoP's `algs` parameter (RFC 9449 §7.1): the proof algorithms the resource accepts.
    public var algorithms: [String] { parameters["algs"].map { $0.split(separator: " ").map(String.init) } ?? [] }

    /// The longest header accepted (8 KiB): a resource server's challenge is a few hundred bytes.
    public static let maximumHeaderLength = 8192
    /// The most challenges, and parameters per challenge, accepted.
    public static let maximumCount = 16

    /// Parses a `WWW-Authenticate` field value (several headers joined by commas are one value).
    /// Never traps on any input.
    /// - Throws: `AuthError.invalidResponse` for a malformed, oversized or ambiguous value
    ///   (a parameter repeated within a challenge).
    public static func parse(_ header: String) throws(AuthError) -> [AuthenticationChallenge] {
        guard header.utf8.count <= maximumHeaderLength else {
            throw .invalidResponse("the WWW-Authenticate header is longer than \(maximumHeaderLength) bytes")
        }
        var parser = ChallengeParser(bytes: Array(header.utf8))
        return try parser.challenges()
    }

    /// The challenges of `response`'s `WWW-Authenticate` header; none when it has none.
    public static func parse(_ response: HTTPResponse) throws(AuthError) -> [AuthenticationChallenge] {
        guard let header = response.headers["www-authenticate"] else { return [] }
        return try parse(header)
    }
}
