import CredentialVault
import Foundation
import Logging

/// From a protected resource to its authorization server, as the MCP authorization profile
/// asks: the resource's 401 challenge (`resource_metadata`), its RFC 9728 metadata (whose
/// `resource` must equal the resource exactly), an authorization server from the metadata,
/// then that server's metadata by RFC 8414 first and OpenID Connect Discovery after, the
/// issuer checked at every step.
public struct ResourceAuthorizationDiscovery: Sendable {
    private let http: OAuthEndpointClient
    private let allowsInsecureHTTP: Bool

    /// Creates the discovery client.
    /// - Parameter allowsInsecureHTTP: plain http off this machine (never for production).
    public init(
        transport: any HTTPTransport = DefaultHTTPTransport.make(), timeout: Duration = .seconds(30),
        allowsInsecureHTTP: Bool = false, logger: Logger = .credentialVaultSilent
    ) {
        self.http = OAuthEndpointClient(transport: transport, timeout: timeout, logger: logger.redacting, bareBadRequestIsInvalidGrant: false)
        self.allowsInsecureHTTP = allowsInsecureHTTP
    }

    /// Discovers how to get a token for `resource` from the resource's answer to a request
    /// without (or with an insufficient) token: its `WWW-Authenticate` challenge's
    /// `resource_metadata` and `scope`, or the RFC 9728 well-known URL when it has none.
    /// - Parameter choose: picks the authorization server among the metadata's (default: the first).
    public func discover(
        resource: URL, response: HTTPResponse, choose: @Sendable ([URL]) -> URL? = { $0.first }
    ) async throws(AuthError) -> ResourceAuthorization {
        let challenges = try AuthenticationChallenge.parse(response)
        // The first OAuth challenge that names its metadata, else the first OAuth challenge.
        let oauth = challenges.filter { $0.isScheme("Bearer") || $0.isScheme("DPoP") }
        let challenge = oauth.first { $0.resourceMetadata != nil } ?? oauth.first
        return try await discover(resource: resource, challenge: challenge, choose: choose)
    }

    /// Discovers from a parsed challenge (`nil`: the RFC 9728 well-known URL of `resource`).
    public func discover(
        resource: URL, challenge: AuthenticationChallenge?, choose: @Sendable ([URL]) -> URL? = { $0.first }
    ) async throws(AuthError) -> ResourceAuthorization {
        let canonical = try ResourceURI.canonical(resource)
        let metadata = try await protectedResourceMetadata(for: canonical, at: challenge?.resourceMetadata)
        guard let issuer = choose(metadata.authorizationServers) else {
            throw .discoveryFailed("the protected resource names no authorization server")
        }
        guard metadata.authorizationServers.contains(issuer) else {
            throw .invalidConfiguration("the chosen authorization server is not one the resource names")
        }
        // The resource's own scheme rules apply: an https resource cannot send the client to a
        // plain-http authorization server, not even one on this machine (a hostile document
        // would otherwise probe loopback services and downgrade the sign-in to clear text).
        guard policy(for: canonical).allows(issuer) else {
            throw .discoveryFailed("the authorization server \(Redactor.describe(issuer)) is not https (plain http only for an http resource on this machine)")
        }
        let provider = try await authorizationServerMetadata(issuer: issuer)
        let asked = challenge?.scopes ?? []
        return ResourceAuthorization(
            resource: canonical, resourceMetadata: metadata, issuer: issuer, providerMetadata: provider,
            scopes: asked.isEmpty ? metadata.scopesSupported : asked)
    }

    /// Fetches the resource's RFC 9728 metadata from `url` (default: the well-known URL built
    /// from `resource`) and checks that its `resource` is exactly `resource` (RFC 9728 §3.3:
    /// otherwise an attacker's document could send the client to its own server).
    public func protectedResourceMetadata(for resource: URL, at url: URL? = nil) async throws(AuthError) -> ProtectedResourceMetadata {
        let canonical = try ResourceURI.canonical(resource)
        let documentURL: URL
        if let url { documentURL = url } else { documentURL = try ResourceURI.metadataURL(for: canonical) }
        guard policy(for: canonical).allows(documentURL) else {
            throw .discoveryFailed("the resource metadata URL \(Redactor.describe(documentURL)) is not https")
        }
        let data: Data
        do {
            data = try await http.getJSON(documentURL, limit: ResponseLimit.resourceMetadata)
        } catch let error where error.isTransient || error == .cancelled {
            throw error
        } catch {
            throw .discoveryFailed("\(Redactor.describe(documentURL)) answered: \(error)")
        }
        let metadata = try ProtectedResourceMetadata.parse(data)
        // Compared in canonical form on both sides, so that only case and default ports may differ.
        guard let published = URL(string: metadata.resource), let publishedCanonical = try? ResourceURI.canonical(published),
            exactlyEqual(publishedCanonical.absoluteString, canonical.absoluteString)
        else {
            throw .discoveryFailed("the protected resource metadata names resource \(metadata.resource.prefix(200)), not \(canonical.absoluteString)")
        }
        return metadata
    }

    /// The authorization server's metadata for `issuer`: RFC 8414
    /// (`/.well-known/oauth-authorization-server` inserted before the path), then OpenID
    /// Connect Discovery path-inserted and path-appended (glewlwyd 2.7.5 has only the last).
    /// A document that answers must name exactly `issuer`; one that is absent is skipped.
    public func authorizationServerMetadata(issuer: URL) async throws(AuthError) -> ProviderMetadata {
        let policy = policy(for: issuer)
        guard policy.allows(issuer) else { throw .discoveryFailed("the issuer \(Redactor.describe(issuer)) is not https") }
        var answers: [String] = []
        for url in Self.metadataURLs(for: issuer) {
            var request = HTTPRequest(method: "GET", url: url, headers: ["Accept": "application/json"], timeout: http.timeout)
            request.maximumResponseSize = ResponseLimit.discovery
            let response = try await http.transport.send(request)
            http.logger.trace("\(request) -> \(response.status)", metadata: ["category": "http"])
            guard response.status == 200 else {
                if response.status >= 500 || response.status == 429 {
                    throw OAuthEndpointClient.failure(response, grant: nil, confidential: false, bare400IsInvalidGrant: false)
                }
                answers.append("\(Redactor.describe(url)): HTTP \(response.status)")
                continue
            }
            let metadata: ProviderMetadata
            do { metadata = try OutsideJSON.decode(ProviderMetadata.self, from: response.body) } catch {
                throw .discoveryFailed("the document at \(Redactor.describe(url)) is not valid authorization server metadata")
            }
            guard Discovery.namesIssuer(metadata, issuer) else {
                throw .discoveryFailed("the document at \(Redactor.describe(url)) names issuer \(metadata.issuer.prefix(200)), not \(issuer.absoluteString)")
            }
            if let refused = policy.firstRefused(metadata) { throw .discoveryFailed(EndpointPolicy.reason(refused)) }
            if let registration = metadata.registrationEndpoint, !policy.allows(registration) {
                throw .discoveryFailed(EndpointPolicy.reason(("registration_endpoint", registration)))
            }
            return metadata
        }
        throw .discoveryFailed("no authorization server metadata for \(issuer.absoluteString) (" + answers.joined(separator: "; ") + ")")
    }

    /// The candidate metadata URLs in the MCP profile's order.
    static func metadataURLs(for issuer: URL) -> [URL] {
        guard var parts = URLComponents(url: issuer, resolvingAgainstBaseURL: false) else { return [] }
        var path = parts.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        parts.query = nil
        parts.fragment = nil
        func inserted(_ wellKnown: String) -> URL? {
            parts.percentEncodedPath = "/.well-known/" + wellKnown + path
            return parts.url
        }
        var urls = [inserted("oauth-authorization-server"), inserted("openid-configuration")]
        if !path.isEmpty { urls.append(Discovery.configurationURL(for: issuer)) }
        return urls.compactMap { $0 }
    }

    /// The endpoint policy for a resource or issuer: https, or http on this machine.
    private func policy(for url: URL) -> EndpointPolicy {
        EndpointPolicy(issuer: url, allowsInsecureHTTP: allowsInsecureHTTP)
    }
}
