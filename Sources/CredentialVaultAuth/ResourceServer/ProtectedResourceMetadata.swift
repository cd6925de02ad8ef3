import Foundation

extension ResponseLimit {
    /// A protected resource metadata document (RFC 9728; 64 KiB: a few URLs and lists).
    static let resourceMetadata = 64 * 1024
}

/// What a protected resource publishes about itself (RFC 9728 §2), as far as a client uses it.
public struct ProtectedResourceMetadata: Sendable, Hashable {
    /// The resource identifier; must equal the URL the client asked about (RFC 9728 §3.3).
    public var resource: String
    /// The issuers of the authorization servers that grant tokens for it.
    public var authorizationServers: [URL]
    /// Scopes used to request access to it.
    public var scopesSupported: [String]
    /// How it accepts tokens (`header`, `body`, `query`).
    public var bearerMethodsSupported: [String]
    /// DPoP proof algorithms it accepts.
    public var dpopSigningAlgValuesSupported: [String]
    /// Whether it accepts only DPoP-bound access tokens.
    public var dpopBoundAccessTokensRequired: Bool
    /// A human-readable name (resource text: redact before showing).
    public var resourceName: String?

    /// Creates metadata by hand.
    public init(
        resource: String, authorizationServers: [URL], scopesSupported: [String] = [], bearerMethodsSupported: [String] = [],
        dpopSigningAlgValuesSupported: [String] = [], dpopBoundAccessTokensRequired: Bool = false, resourceName: String? = nil
    ) {
        self.resource = resource
        self.authorizationServers = authorizationServers
        self.scopesSupported = scopesSupported
        self.bearerMethodsSupported = bearerMethodsSupported
        self.dpopSigningAlgValuesSupported = dpopSigningAlgValuesSupported
        self.dpopBoundAccessTokensRequired = dpopBoundAccessTokensRequired
        self.resourceName = resourceName
    }

    /// The most entries read from any list (more are refused as hostile).
    static let maximumListCount = 64
    /// The longest string member.
    static let maximumStringLength = 2048

    /// Parses a document as hostile input: strict JSON, bounded size and lists, types checked.
    /// - Throws: `AuthError.invalidResponse` naming what is wrong.
    public static func parse(_ data: Data) throws(AuthError) -> ProtectedResourceMetadata {
        guard data.count <= ResponseLimit.resourceMetadata else { throw ResponseLimit.exceeded(ResponseLimit.resourceMetadata) }
        let json: JSONValue
        do { json = try JSONValue.parse(data) } catch { throw .invalidResponse("the protected resource metadata is not valid JSON") }
        guard case .object(let members) = json else { throw .invalidResponse("the protected resource metadata is not a JSON object") }
        guard let resource = try string(members, "resource"), !resource.isEmpty else {
            throw .invalidResponse("the protected resource metadata has no resource")
        }
        let servers = try strings(members, "authorization_servers").map { (text: String) throws(AuthError) -> URL in
            guard let url = URL(string: text), url.scheme != nil, url.host?.isEmpty == false else {
                throw .invalidResponse("an authorization_servers entry is not an absolute URL")
            }
            return url
        }
        let required: Bool
        switch members["dpop_bound_access_tokens_required"] {
        case nil, .null?: required = false
        case .bool(let value)?: required = value
        default: throw .invalidResponse("the protected resource metadata's dpop_bound_access_tokens_required is not a Boolean")
        }
        return ProtectedResourceMetadata(
            resource: resource, authorizationServers: servers, scopesSupported: try strings(members, "scopes_supported"),
            bearerMethodsSupported: try strings(members, "bearer_methods_supported"),
            dpopSigningAlgValuesSupported: try strings(members, "dpop_signing_alg_values_supported"),
            dpopBoundAccessTokensRequired: required, resourceName: try string(members, "resource_name"))
    }

    private static func string(_ members: [String: JSONValue], _ name: String) throws(AuthError) -> String? {
        switch members[name] {
        case nil, .null?: return nil
        case .string(let value)? where value.utf8.count <= maximumStringLength: return value
        default: throw .invalidResponse("the protected resource metadata's \(name) is not a string of at most \(maximumStringLength) bytes")
        }
    }

    private static func strings(_ members: [String: JSONValue], _ name: String) throws(AuthError) -> [String] {
        switch members[name] {
        case nil, .null?: return []
        case .array(let values)? where values.count <= maximumListCount:
            var result: [String] = []
            for value in values {
                guard case .string(let text) = value, text.utf8.count <= maximumStringLength else {
                    throw .invalidResponse("the protected resource metadata's \(name) holds a non-string or oversized entry")
                }
                result.append(text)
            }
            return result
        default: throw .invalidResponse("the protected resource metadata's \(name) is not a list of at most \(maximumListCount) strings")
        }
    }
}
