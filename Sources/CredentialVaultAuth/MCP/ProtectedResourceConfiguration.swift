import CredentialVault
import Foundation

/// How a `ProtectedResourceClient` gets access to one protected resource (the MCP
/// authorization profile): the resource, the loopback redirect, and the client identities to
/// try in the profile's order.
public struct ProtectedResourceConfiguration: Sendable {
    /// The resource's URL (an MCP server's endpoint); its canonical form is the `resource`
    /// sent in the authorization and every token request.
    public var resource: URL
    /// Where the browser comes back. glewlwyd and other providers that match redirect URIs
    /// with their port need `.fixed(port)`: a dynamically registered client is registered with
    /// this exact redirect (with an ephemeral port, with the port left out as RFC 8252 7.3 lets
    /// a loopback redirect be registered).
    public var redirect: LoopbackRedirect
    /// A client id registered out of band at the resource's authorization server: used first.
    public var clientID: String?
    /// The pre-registered client's authentication (default `.none`: a public client).
    public var clientAuthentication: ClientAuthentication
    /// The https URL of this client's Client ID Metadata Document: used as `client_id` when
    /// there is no pre-registered id and the server publishes
    /// `client_id_metadata_document_supported: true`.
    public var clientMetadataDocument: URL?
    /// The name shown on the consent screen of a dynamically registered client.
    public var clientName: String
    /// The credential service under which sessions and registered clients are stored.
    public var storageService: String
    /// Bind the tokens to a per-session DPoP key (RFC 9449; default `false`).
    public var dpop: Bool
    /// Plain http off this machine (never for production).
    public var allowsInsecureHTTP: Bool
    /// How many times one `send` signs in again for the scopes an `insufficient_scope`
    /// challenge asks for before it gives up with `AuthError.insufficientScope` (default 2).
    public var maximumStepUps: Int
    /// The deadline of every single HTTP exchange (default 30 s).
    public var requestTimeout: Duration
    /// The session manager's tuning.
    public var session: SessionManager.Configuration

    /// Creates a configuration.
    public init(
        resource: URL, redirect: LoopbackRedirect = LoopbackRedirect(), clientID: String? = nil,
        clientAuthentication: ClientAuthentication = .none, clientMetadataDocument: URL? = nil,
        clientName: String = "CredentialVault", storageService: String = "credential-vault.auth", dpop: Bool = false,
        allowsInsecureHTTP: Bool = false, maximumStepUps: Int = 2, requestTimeout: Duration = .seconds(30),
        session: SessionManager.Configuration = .init()
    ) {
        self.resource = resource
        self.redirect = redirect
        self.clientID = clientID
        self.clientAuthentication = clientAuthentication
        self.clientMetadataDocument = clientMetadataDocument
        self.clientName = clientName
        self.storageService = storageService
        self.dpop = dpop
        self.allowsInsecureHTTP = allowsInsecureHTTP
        self.maximumStepUps = maximumStepUps
        self.requestTimeout = requestTimeout
        self.session = session
    }

    /// The most step-ups a configuration may allow (each is a browser sign-in).
    public static let maximumStepUpLimit = 10

    /// The redirect URI registered for a dynamically registered client.
    var redirectURI: String {
        let port = redirect.port.number
        return "http://127.0.0.1" + (port == 0 ? "" : ":\(port)") + redirect.path
    }

    /// Where the client registered dynamically at `endpoint` is kept.
    /// Keyed by the issuer too: a hostile authorization server naming an honest one's
    /// registration endpoint must not get that registration (its client id and secret).
    func registrationKey(issuer: URL, endpoint: URL) -> CredentialKey {
        CredentialKey(
            service: storageService, account: "registered client \(issuer.absoluteString) \(endpoint.absoluteString)",
            label: "OAuth client registered at \(endpoint.absoluteString)")
    }

    func validate() throws(AuthError) {
        _ = try ResourceURI.indicator(resource)
        // Checked before anything is sent to it (the first request carries no token, but a
        // plain-http request off this machine is already a downgrade an attacker can answer).
        guard EndpointPolicy(issuer: resource, allowsInsecureHTTP: allowsInsecureHTTP).allows(resource) else {
            throw .invalidConfiguration("the resource \(Redactor.describe(resource)) is not https (plain http only on this machine)")
        }
        guard (0...Self.maximumStepUpLimit).contains(maximumStepUps) else {
            throw .invalidConfiguration("maximumStepUps must be between 0 and \(Self.maximumStepUpLimit)")
        }
        if let clientID, clientID.isEmpty { throw .invalidConfiguration("the pre-registered client id is empty") }
        try clientAuthentication.validate()
        if let clientMetadataDocument { try Self.checkMetadataDocumentURL(clientMetadataDocument) }
        guard !storageService.isEmpty else { throw .invalidConfiguration("the storage service is empty") }
    }

    /// A Client ID Metadata Document URL is an https URL with a path, without fragment, user
    /// information or dot segments (the server fetches it and compares it as a string).
    static func checkMetadataDocumentURL(_ url: URL) throws(AuthError) {
        guard let parts = URLComponents(url: url, resolvingAgainstBaseURL: false), parts.scheme?.lowercased() == "https",
            parts.host?.isEmpty == false, parts.user == nil, parts.password == nil, parts.fragment == nil,
            parts.path.count > 1, !parts.path.split(separator: "/").contains(where: { $0 == "." || $0 == ".." })
        else {
            throw .invalidConfiguration("a client metadata document URL must be an https URL with a path, without fragment or user information")
        }
    }
}
