import Foundation

/// Everything a client learns from a protected resource before it signs in (the MCP
/// authorization profile): the canonical resource, its metadata, the chosen authorization
/// server and that server's metadata, and the scopes the resource's challenge asked for.
public struct ResourceAuthorization: Sendable, Hashable {
    /// The canonical resource URI: send it as `resource` in authorization and token requests.
    public var resource: URL
    /// The resource's RFC 9728 metadata (its `resource` equals `resource`).
    public var resourceMetadata: ProtectedResourceMetadata
    /// The chosen authorization server's issuer.
    public var issuer: URL
    /// The authorization server's metadata (RFC 8414 or OpenID Connect Discovery), issuer checked.
    public var providerMetadata: ProviderMetadata
    /// The scopes to ask for: the challenge's `scope`, else the metadata's `scopes_supported`.
    public var scopes: [String]

    /// Creates the result by hand.
    public init(
        resource: URL, resourceMetadata: ProtectedResourceMetadata, issuer: URL, providerMetadata: ProviderMetadata,
        scopes: [String]
    ) {
        self.resource = resource
        self.resourceMetadata = resourceMetadata
        self.issuer = issuer
        self.providerMetadata = providerMetadata
        self.scopes = scopes
    }
}
