import Foundation

/// OpenID Connect Discovery: fetches and checks `<issuer>/.well-known/openid-configuration`.
enum Discovery {
    /// The discovery document's URL for `issuer` (path-appended, as OIDC Discovery §4 says).
    static func configurationURL(for issuer: URL) -> URL {
        var text = issuer.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + "/.well-known/openid-configuration") ?? issuer
    }

    /// Fetches and validates the metadata: it must parse, name exactly this issuer and use
    /// absolute http(s) endpoints.
    static func fetch(issuer: URL, using http: OAuthEndpointClient) async throws(AuthError) -> ProviderMetadata {
        let url = configurationURL(for: issuer)
        let data: Data
        do {
            data = try await http.getJSON(url)
        } catch let error where error.isTransient || error == .cancelled {
            throw error
        } catch {
            throw .discoveryFailed("\(Redactor.describe(url)) answered: \(error)")
        }
        let metadata: ProviderMetadata
        do {
            metadata = try JSONDecoder().decode(ProviderMetadata.self, from: data)
        } catch {
            throw .discoveryFailed("the document at \(Redactor.describe(url)) is not valid provider metadata")
        }
        guard trimmed(metadata.issuer) == trimmed(issuer.absoluteString) else {
            throw .discoveryFailed("the document names issuer \(metadata.issuer.prefix(200)), not \(issuer.absoluteString)")
        }
        let endpoints = [metadata.authorizationEndpoint, metadata.tokenEndpoint, metadata.jwksURI,
                         metadata.revocationEndpoint, metadata.deviceAuthorizationEndpoint, metadata.endSessionEndpoint]
        for case let endpoint? in endpoints where !["https", "http"].contains(endpoint.scheme?.lowercased() ?? "") {
            throw .discoveryFailed("endpoint \(Redactor.describe(endpoint)) is not an http(s) URL")
        }
        http.logger.debug("discovery", "discovered \(metadata.issuer)")
        return metadata
    }

    private static func trimmed(_ text: String) -> String {
        var value = text
        while value.hasSuffix("/") { value.removeLast() }
        return value
    }
}
