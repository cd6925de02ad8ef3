import Foundation

/// Resource identifiers (RFC 8707 §2, RFC 9728 §1.2, the MCP authorization profile): the
/// canonical form sent as `resource` and compared with protected resource metadata.
public enum ResourceURI {
    /// The canonical form of `url`: scheme and host in lower case, no fragment, the default
    /// port (80 for http, 443 for https) dropped; path and query kept as they are (a trailing
    /// slash is significant: providers compare resources as exact strings).
    /// - Throws: `AuthError.invalidConfiguration` for a URL that is not absolute http(s) or
    ///   that carries user information.
    public static func canonical(_ url: URL) throws(AuthError) -> URL {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = parts.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let host = parts.host, !host.isEmpty
        else { throw .invalidConfiguration("a resource must be an absolute http(s) URL") }
        guard parts.user == nil, parts.password == nil else {
            throw .invalidConfiguration("a resource URL must not carry user information")
        }
        parts.scheme = scheme
        parts.host = host.lowercased()
        parts.fragment = nil
        if parts.port == defaultPort(scheme) { parts.port = nil }
        guard let canonical = parts.url else { throw .invalidConfiguration("a resource must be an absolute http(s) URL") }
        return canonical
    }

    /// The longest resource indicator accepted (characters of its canonical form): a resource
    /// travels in every authorization and token request and names a slot of the stored session.
    public static let maximumIndicatorLength = 2048

    /// `url` as an RFC 8707 resource indicator: its canonical form (`canonical(_:)`) as the
    /// string sent as `resource` and under which its access token is stored.
    /// - Throws: `AuthError.invalidConfiguration` for a URL that `canonical(_:)` refuses, one
    ///   with a fragment (RFC 8707 section 2 forbids it rather than letting it be dropped), or
    ///   one longer than `maximumIndicatorLength`.
    public static func indicator(_ url: URL) throws(AuthError) -> String {
        guard url.fragment == nil, !url.absoluteString.contains("#") else {
            throw .invalidConfiguration("a resource indicator must not have a fragment (RFC 8707 section 2)")
        }
        let text = try canonical(url).absoluteString
        guard text.utf8.count <= maximumIndicatorLength else {
            throw .invalidConfiguration("a resource indicator is longer than \(maximumIndicatorLength) characters")
        }
        return text
    }

    /// Whether `text` is a resource indicator exactly as `indicator(_:)` writes it (bounded in
    /// length before it is parsed): stored records keep resources only in that form.
    static func isIndicator(_ text: String) -> Bool {
        guard text.utf8.count <= maximumIndicatorLength, let url = URL(string: text) else { return false }
        return (try? indicator(url)) == text
    }

    /// Whether `lhs` and `rhs` have the same origin (scheme, host and effective port, case
    /// folded): where a resource's token may go.
    public static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        guard let lhsScheme = lhs.scheme?.lowercased(), let rhsScheme = rhs.scheme?.lowercased(),
            let lhsHost = lhs.host?.lowercased(), let rhsHost = rhs.host?.lowercased()
        else { return false }
        return lhsScheme == rhsScheme && lhsHost == rhsHost && effectivePort(lhs) == effectivePort(rhs)
    }

    /// The port `url` connects to: its own, or its scheme's default.
    static func effectivePort(_ url: URL) -> Int? {
        url.port ?? url.scheme.flatMap { defaultPort($0.lowercased()) }
    }

    private static func defaultPort(_ scheme: String) -> Int? {
        switch scheme {
        case "https": 443
        case "http": 80
        default: nil
        }
    }

    /// Where RFC 9728 §3.1 puts the protected resource metadata of `resource`:
    /// `/.well-known/oauth-protected-resource` inserted between the host and the path (a
    /// terminating slash after the host removed), the query kept.
    public static func metadataURL(for resource: URL) throws(AuthError) -> URL {
        let canonical = try canonical(resource)
        guard var parts = URLComponents(url: canonical, resolvingAgainstBaseURL: false) else {
            throw .invalidConfiguration("a resource must be an absolute http(s) URL")
        }
        let path = parts.percentEncodedPath == "/" ? "" : parts.percentEncodedPath
        parts.percentEncodedPath = "/.well-known/oauth-protected-resource" + path
        guard let url = parts.url else { throw .invalidConfiguration("a resource must be an absolute http(s) URL") }
        return url
    }
}
