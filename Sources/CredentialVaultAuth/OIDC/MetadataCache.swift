import Foundation

/// The provider metadata: the configured one, or discovered once and kept.
actor MetadataCache {
    private var metadata: ProviderMetadata?
    private let issuer: URL

    init(issuer: URL, preset: ProviderMetadata?) {
        self.issuer = issuer
        self.metadata = preset
    }

    func get(using http: OAuthEndpointClient) async throws(AuthError) -> ProviderMetadata {
        if let metadata { return metadata }
        let discovered = try await Discovery.fetch(issuer: issuer, using: http)
        metadata = discovered
        return discovered
    }
}
