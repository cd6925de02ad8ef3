import Logging
import CredentialVault
import Foundation

/// An OpenID Connect / OAuth 2.0 client whose session lives in the application's store
/// (through its asynchronous API, `AsyncTokenStorageAdapter`, so no call blocks on it): sign-in with authorization code + PKCE (loopback or custom-scheme
/// redirect) or the device grant, ID token verification, a session manager that keeps the
/// tokens fresh, and sign-out with revocation.
public final class OIDCClient: Sendable {
    /// The configuration.
    public let configuration: OIDCConfiguration
    /// The session manager (`getSession()`, `getAccessToken(forceRefresh:)`, `states()`).
    public let sessions: SessionManager
    let provider: OIDCProvider
    let store: any AsyncTokenStorageAdapter
    let logger: Logger
    let clock: any CredentialClock

    /// Creates a client and reads the stored session (awaited, never blocking): `state` then
    /// says whether someone is signed in, or that the store is locked or failing (never
    /// "signed out" for a store that could not answer; `reload()` asks again).
    /// - Parameters:
    ///   - store: where the session and pending sign-ins are kept. Pending sign-ins are
    ///     ephemeral, so the store must support `.ephemeral` for the authorization-code flow.
    ///   - transport: HTTP (default `DefaultHTTPTransport.make()`: libcurl on Linux).
    ///   - clock: the source of "now" (expiry decisions, ID token times).
    ///   - logger: where it logs (a swift-log `Logger`; default: none, silent). Every message and metadata
    ///     value passes through `Redactor` first, at every level.
    public init(
        configuration: OIDCConfiguration, store: any AsyncTokenStorageAdapter,
        transport: any HTTPTransport = DefaultHTTPTransport.make(), clock: any CredentialClock = SystemClock(),
        logger: Logger = .credentialVaultSilent
    ) async throws(AuthError) {
        try configuration.validate()
        self.configuration = configuration
        self.store = store
        self.logger = logger.redacting
        self.clock = clock
        self.provider = OIDCProvider(configuration: configuration, transport: transport, clock: clock, logger: logger, store: store)
        self.sessions = await SessionManager(
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

    /// A session whose access token stays valid for at least `minTTL` (see
    /// `SessionManager.credentials(minTTL:)`).
    public func credentials(minTTL: Duration) async throws(AuthError) -> AuthSession {
        try await sessions.credentials(minTTL: minTTL)
    }

    /// A valid access token for `resource` (RFC 8707), from the session's per-resource tokens
    /// or a refresh with `resource=` (see `SessionManager.accessToken(for:minTTL:)`).
    public func accessToken(for resource: URL, minTTL: Duration = .zero) async throws(AuthError) -> String {
        try await sessions.accessToken(for: resource, minTTL: minTTL)
    }

    /// Whether a usable session is stored, from memory: no network, no store call (see
    /// `SessionManager.hasUsableSession`).
    public var hasUsableSession: Bool { sessions.hasUsableSession }

    /// The current auth state.
    public var state: AuthState { sessions.state }

    /// The stream of auth states.
    public func states() -> AsyncStream<AuthState> { sessions.states() }

    /// Reads the stored session again (after the user unlocked the store) and returns the new state.
    @discardableResult
    public func reload() async -> AuthState { await sessions.reload() }

    /// Verifies an ID token from this provider (signature against the JWKS, refetched once on
    /// an unknown key; `iss`, `aud`, `azp`, `exp`, `iat`, and `nonce` when given).
    public func verifyIDToken(_ idToken: String, nonce: String?) async throws(AuthError) -> VerifiedIDToken {
        try await provider.verifyIDToken(idToken, nonce: nonce)
    }
}
