import Foundation

/// The provider metadata: the configured one, or discovered once and kept.
actor MetadataCache {
    private var metadata: ProviderMetadata?
    private let issuer: URL
    private let policy: EndpointPolicy

    /// `preset` has passed `OIDCConfiguration.validate()` (the same endpoint policy).
    init(issuer: URL, preset: ProviderMetadata?, policy: EndpointPolicy) {
        self.issuer = issuer
        self.metadata = preset
        self.policy = policy
    }

    func get(using http: OAuthEndpointClient) async throws(AuthError) -> ProviderMetadata {
        if let metadata { return metadata }
        let discovered = try await Discovery.fetch(issuer: issuer, policy: policy, using: http)
        metadata = discovered
        return discovered
    }
}
