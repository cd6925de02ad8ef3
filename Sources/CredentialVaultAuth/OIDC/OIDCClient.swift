import CredentialVault
import Foundation

/// An OpenID Connect / OAuth 2.0 client whose session lives in the application's
/// `TokenStorageAdapter`: sign-in with authorization code + PKCE (loopback or custom-scheme
/// redirect) or the device grant, ID token verification, a session manager that keeps the
/// tokens fresh, and sign-out with revocation.
public final class OIDCClient: Sendable {
    /// The configuration.
    public let configuration: OIDCConfiguration
    /// The session manager (`getSession()`, `getAccessToken(forceRefresh:)`, `states()`).
    public let sessions: SessionManager
    let provider: OIDCProvider
    let store: any TokenStorageAdapter
    let logger: AuthLogger
    let clock: any CredentialClock

    /// Creates a client.
    /// - Parameters:
    ///   - store: where the session and pending sign-ins are kept. Pending sign-ins are
    ///     ephemeral, so the store must support `.ephemeral` for the authorization-code flow.
    ///   - transport: HTTP (default `DefaultHTTPTransport.make()`: libcurl on Linux).
    ///   - clock: the source of "now" (expiry decisions, ID token times).
    ///   - logger: where the client logs (redacted).
    public init(
        configuration: OIDCConfiguration, store: any TokenStorageAdapter,
        transport: any HTTPTransport = DefaultHTTPTransport.make(), clock: any CredentialClock = SystemClock(),
        logger: AuthLogger = AuthLogger()
    ) throws(AuthError) {
        try configuration.validate()
        self.configuration = configuration
        self.store = store
        self.logger = logger
        self.clock = clock
        self.provider = OIDCProvider(configuration: configuration, transport: transport, clock: clock, logger: logger)
        self.sessions = SessionManager(
            refresher: OIDCRefresher(provider: provider), store: store, key: configuration.sessionKey,
            storageOptions: StorageOptions(accessibility: configuration.sessionAccessibility),
            configuration: configuration.session, clock: clock, logger: logger)
    }

    /// The provider's metadata (discovered on first use, then cached).
    public func metadata() async throws(AuthError) -> ProviderMetadata { try await provider.metadata() }

    /// The stored session, refreshed when it expires within the margin.
    public func getSession() async throws(AuthError) -> AuthSession { try await sessions.getSession() }

    /// A valid access token (see `SessionManager.getAccessToken(forceRefresh:)`).
    public func getAccessToken(forceRefresh: Bool = false) async throws(AuthError) -> String {
        try await sessions.getAccessToken(forceRefresh: forceRefresh)
    }

    /// The stream of auth states.
    public func states() -> AsyncStream<AuthState> { sessions.states() }

    /// Verifies an ID token from this provider (signature against the JWKS, refetched once on
    /// an unknown key; `iss`, `aud`, `azp`, `exp`, `iat`, and `nonce` when given).
    public func verifyIDToken(_ idToken: String, nonce: String?) async throws(AuthError) -> VerifiedIDToken {
        try await provider.verifyIDToken(idToken, nonce: nonce)
    }
}
