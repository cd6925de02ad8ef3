import CredentialVault
import Foundation
import Logging

/// Chooses the client identity at a resource's authorization server in the MCP profile's
/// order: the pre-registered client id; else the Client ID Metadata Document, only when the
/// server's metadata says `client_id_metadata_document_supported: true`; else dynamic
/// registration (RFC 7591), reusing the registration kept in the vault when it still fits.
struct ClientIdentityResolver: Sendable {
    let configuration: ProtectedResourceConfiguration
    let store: any AsyncTokenStorageAdapter
    let transport: any HTTPTransport
    let logger: Logger

    func resolve(_ authorization: ResourceAuthorization) async throws(AuthError) -> ClientIdentity {
        if let clientID = configuration.clientID {
            return .preRegistered(clientID: clientID, authentication: configuration.clientAuthentication)
        }
        let metadata = authorization.providerMetadata
        if let document = configuration.clientMetadataDocument, metadata.clientIDMetadataDocumentSupported == true {
            return .metadataDocument(document)
        }
        guard let endpoint = metadata.registrationEndpoint else {
            throw .unsupported(
                "no pre-registered client id, no client metadata document the authorization server accepts, and the server"
                    + " offers no dynamic client registration: register a client there and pass its id")
        }
        // Another origin's endpoint would register (and reuse) a client of another server for
        // this one: its credentials would then go to this server's token endpoint.
        guard ResourceURI.sameOrigin(endpoint, authorization.issuer) else {
            throw .discoveryFailed("the registration endpoint \(Redactor.describe(endpoint)) is not on the authorization server's origin")
        }
        let key = configuration.registrationKey(issuer: authorization.issuer, endpoint: endpoint)
        if let stored = try await RegisteredClient.load(from: store, key: key), fits(stored, endpoint: endpoint) {
            return .registered(stored)
        }
        let registration = try ClientRegistration(
            endpoint: endpoint, transport: transport, timeout: configuration.requestTimeout,
            allowsInsecureHTTP: configuration.allowsInsecureHTTP, logger: logger)
        let scope = authorization.scopes.isEmpty ? nil : authorization.scopes.joined(separator: " ")
        // Saved only once the server answered with a well-formed registration: a refused or
        // malformed answer (no client_id, ...) throws first and leaves nothing behind.
        let client = try await registration.register(
            .publicNative(redirectURIs: [configuration.redirectURI], clientName: configuration.clientName, scope: scope))
        try await client.save(to: store, key: key)
        return .registered(client)
    }

    /// A stored registration is reused when it was made at this endpoint for this redirect
    /// and its secret (if any) has not expired.
    private func fits(_ client: RegisteredClient, endpoint: URL) -> Bool {
        guard client.registrationEndpoint == endpoint, !client.secretHasExpired() else { return false }
        let redirects = client.metadata["redirect_uris"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return redirects.contains(configuration.redirectURI)
    }
}
