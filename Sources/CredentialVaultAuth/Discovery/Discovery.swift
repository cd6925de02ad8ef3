import Logging
import CredentialVault
import Foundation

/// OpenID Connect Discovery: fetches and checks `<issuer>/.well-known/openid-configuration`.
enum Discovery {
    /// The discovery document's URL for `issuer` (path-appended, as OIDC Discovery §4 says).
    static func configurationURL(for issuer: URL) -> URL {
        var text = issuer.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + "/.well-known/openid-configuration") ?? issuer
    }

    /// Fetches and validates the metadata: it must parse, name exactly this issuer (OIDC
    /// Discovery §4.3: identical strings, no normalisation) and use only endpoints `policy` allows.
    static func fetch(issuer: URL, policy: EndpointPolicy, using http: OAuthEndpointClient) async throws(AuthError) -> ProviderMetadata {
        let url = configurationURL(for: issuer)
        let data: Data
        do {
            data = try await http.getJSON(url, limit: ResponseLimit.discovery)
        } catch let error where error.isTransient || error == .cancelled {
            throw error
        } catch {
            throw .discoveryFailed("\(Redactor.describe(url)) answered: \(error)")
        }
        let metadata: ProviderMetadata
        do {
            metadata = try OutsideJSON.decode(ProviderMetadata.self, from: data)
        } catch {
            throw .discoveryFailed("the document at \(Redactor.describe(url)) is not valid provider metadata")
        }
        guard namesIssuer(metadata, issuer) else {
            throw .discoveryFailed("the document names issuer \(metadata.issuer.prefix(200)), not \(issuer.absoluteString)")
        }
        if let refused = policy.firstRefused(metadata) { throw .discoveryFailed(EndpointPolicy.reason(refused)) }
        http.logger.debug("discovered \(metadata.issuer)", metadata: ["category": "discovery"])
        return metadata
    }

    /// Whether the document's `issuer` is exactly (byte for byte) the configured issuer.
    static func namesIssuer(_ metadata: ProviderMetadata, _ issuer: URL) -> Bool {
        exactlyEqual(metadata.issuer, issuer.absoluteString)
    }
}
