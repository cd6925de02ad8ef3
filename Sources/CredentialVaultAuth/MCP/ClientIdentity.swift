import Foundation

/// Who the client is at a protected resource's authorization server, chosen in the MCP
/// authorization profile's order: a pre-registered client id, else a Client ID Metadata
/// Document (an https URL used as the `client_id`), else a client registered dynamically
/// (RFC 7591).
public enum ClientIdentity: Sendable {
    /// A client id the application was given out of band, with its authentication.
    case preRegistered(clientID: String, authentication: ClientAuthentication)
    /// The https URL of the client's metadata document, sent as `client_id` (the server
    /// fetches the document; the client is public).
    case metadataDocument(URL)
    /// A client registered at the server's `registration_endpoint` (kept in the vault).
    case registered(RegisteredClient)

    /// The `client_id` sent in authorization and token requests.
    public var clientID: String {
        switch self {
        case .preRegistered(let clientID, _): clientID
        case .metadataDocument(let url): url.absoluteString
        case .registered(let client): client.clientID
        }
    }

    /// How the client authenticates at the token endpoint.
    public var clientAuthentication: ClientAuthentication {
        switch self {
        case .preRegistered(_, let authentication): authentication
        case .metadataDocument: .none
        case .registered(let client): client.clientAuthentication
        }
    }
}
