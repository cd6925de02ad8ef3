import Logging
import CredentialVault
import Foundation

/// A client for an InsForge backend's auth API (`/api/auth`), with the calls of InsForge's
/// Swift SDK, whose session lives in the application's store (`AsyncTokenStorageAdapter`: a sealed-file
/// vault, Secret Service, memory) instead of plaintext preferences: e-mail and password
/// sign-up and sign-in, e-mail verification, password reset, profile, OAuth with PKCE, and a
/// `SessionManager` that refreshes the tokens through `/api/auth/refresh` (single flight,
/// retries with backoff, a stream of auth states).
///
/// Passwords, codes, tokens and PKCE verifiers are never logged, never put into an error and
/// never shown by a `description`.
public final class InsForgeClient: Sendable {
    /// The configuration.
    public let configuration: InsForgeConfiguration
    /// The session manager (`getSession()`, `getAccessToken(forceRefresh:)`, `states()`).
    public let sessions: SessionManager
    let api: InsForgeAPI
    let store: any AsyncTokenStorageAdapter
    let logger: Logger
    let clock: any CredentialClock

    /// Creates a client and reads the stored session (awaited, never blocking): `state` then
    /// says whether someone is signed in, or that the store is locked or failing.
    /// - Parameters:
    ///   - store: where the session and pending OAuth sign-ins are kept. Pending sign-ins are
    ///     ephemeral, so OAuth needs a store that supports `.ephemeral`.
    ///   - transport: HTTP (default `DefaultHTTPTransport.make()`: libcurl on Linux).
    ///   - clock: the source of "now" (expiry decisions).
    ///   - logger: where it logs (a swift-log `Logger`; default: none, silent). Every message and metadata
    ///     value passes through `Redactor` first, at every level.
    public init(
        configuration: InsForgeConfiguration, store: any AsyncTokenStorageAdapter,
        transport: any HTTPTransport = DefaultHTTPTransport.make(), clock: any CredentialClock = SystemClock(),
        logger: Logger = .credentialVaultSilent
    ) async throws(InsForgeError) {
        try configuration.validate()
        self.configuration = configuration
        self.store = store
        self.logger = logger.redacting
        self.clock = clock
        // `self.logger`, not the parameter: the API logs the backend's error answers, which pass
        // through the redaction like every other record.
        self.api = InsForgeAPI(configuration: configuration, transport: transport, logger: self.logger)
        self.sessions = await SessionManager(
            refresher: InsForgeRefresher(api: api, clock: clock), store: store, key: configuration.sessionKey,
            storageOptions: StorageOptions(accessibility: configuration.sessionAccessibility),
            configuration: configuration.session, clock: clock, logger: logger)
    }

    // MARK: - Session

    /// The stored session, refreshed first when its access token is due (the session manager's rule).
    /// Throws `.auth(.notSignedIn)` when there is none.
    public func getSession() async throws(InsForgeError) -> AuthSession {
        do { return try await sessions.getSession() } catch { throw InsForgeError(error) }
    }

    /// A valid access token; with `forceRefresh`, a newer one than the stored one. Concurrent
    /// callers share one refresh.
    public func getAccessToken(forceRefresh: Bool = false) async throws(InsForgeError) -> String {
        do { return try await sessions.getAccessToken(forceRefresh: forceRefresh) } catch { throw InsForgeError(error) }
    }

    /// The stored session as it is, without refreshing (`nil` when signed out).
    public func storedSession() async throws(InsForgeError) -> AuthSession? {
        do { return try await sessions.storedSession() } catch { throw InsForgeError(error) }
    }

    /// A session whose access token stays valid for at least `minTTL` (see
    /// `SessionManager.credentials(minTTL:)`).
    public func credentials(minTTL: Duration) async throws(InsForgeError) -> AuthSession {
        do { return try await sessions.credentials(minTTL: minTTL) } catch { throw InsForgeError(error) }
    }

    /// Whether a usable session is stored, from memory: no network, no store call (see
    /// `SessionManager.hasUsableSession`).
    public var hasUsableSession: Bool { sessions.hasUsableSession }

    /// The current auth state.
    public var state: AuthState { sessions.state }

    /// Reads the stored session again (after the user unlocked the store) and returns the new state.
    @discardableResult
    public func reload() async -> AuthState { await sessions.reload() }

    /// The auth states: the current one first, then every change.
    public func states() -> AsyncStream<AuthState> { sessions.states() }

    // MARK: - E-mail and password

    /// Registers a user. When the project requires e-mail verification the answer says so
    /// (`needsEmailVerification`) and there is no session yet; otherwise the user is signed in
    /// and the session stored.
    /// - Parameters:
    ///   - name: the profile name.
    ///   - redirectTo: where the backend sends the browser after a verification link is
    ///     clicked (required by projects that verify by link).
    /// - Throws: `emailAlreadyExists` (409), `rateLimited` (429: the user was created but the
    ///   e-mail not sent; see `nextActions`), `backend` (400 password policy, 403 sign-ups off).
    @discardableResult
    public func signUp(email: String, password: String, name: String? = nil, redirectTo: String? = nil) async throws(InsForgeError) -> SignUpResponse {
        try Self.require(email: email)
        guard !password.isEmpty else { throw .invalidInput("the password is empty") }
        struct Body: Encodable {
            var email: String
            var password: String
            var name: String?
            var redirectTo: String?
        }
        let body = try InsForgeAPI.json(Body(email: email, password: password, name: name, redirectTo: redirectTo))
        let response = try await api.call(
            SignUpResponse.self, "POST", "/users", query: api.clientType, body: body, bearer: configuration.anonKey)
        if let accessToken = response.accessToken {
            try await establish(InsForgeAuthResponse(user: response.user, accessToken: accessToken, refreshToken: response.refreshToken))
        } else {
            logger.info("signed up; the e-mail address must be verified before signing in", metadata: ["category": "insforge"])
        }
        return response
    }

    /// Signs in with e-mail and password and stores the session.
    /// - Throws: `invalidCredentials` (401), `emailNotVerified` (403), `rateLimited` (429).
    @discardableResult
    public func signIn(email: String, password: String) async throws(InsForgeError) -> InsForgeAuthResponse {
        try Self.require(email: email)
        guard !password.isEmpty else { throw .invalidInput("the password is empty") }
        let body = try InsForgeAPI.json(["email": email, "password": password])
        let response = try await api.call(
            InsForgeAuthResponse.self, "POST", "/sessions", query: api.clientType, body: body, purpose: .credentials)
        try await establish(response)
        return response
    }

    /// Signs out: deletes the stored session (a refresh finishing later does not write it back)
    /// and tells the backend (`/logout`, best effort). Signing out when signed out does nothing.
    public func signOut() async throws(InsForgeError) {
        do { try await sessions.signOut(revoke: true) } catch { throw InsForgeError(error) }
    }

    /// The signed-in user, as the backend knows them now (`/sessions/current`). An access token
    /// the backend refuses is refreshed once and the request repeated.
    /// - Throws: `.auth(.notSignedIn)`, `userNotFound`, `.auth(.invalidGrant)` when the refresh
    ///   token was refused too (the session is then deleted).
    public func getCurrentUser() async throws(InsForgeError) -> InsForgeUser {
        struct Current: Decodable { var user: InsForgeUser }
        return try await authenticated(Current.self, "GET", "/sessions/current").user
    }

    /// Updates the signed-in user's profile (`name`, `avatar_url`, custom fields); fields not
    /// given are kept. Returns the whole profile after the change.
    @discardableResult
    public func setProfile(_ profile: [String: JSONValue]) async throws(InsForgeError) -> InsForgeProfile {
        let body = try InsForgeAPI.json(["profile": JSONValue.object(profile)])
        return try await authenticated(InsForgeProfile.self, "PATCH", "/profiles/current", body: body)
    }

    // MARK: - Shared steps

    /// Stores the session of a successful sign-in and publishes `.authenticated`.
    func establish(_ response: InsForgeAuthResponse) async throws(InsForgeError) {
        do { try await sessions.establish(InsForgeRefresher.session(from: response, now: clock.now())) } catch { throw InsForgeError(error) }
        logger.info("signed in as \(response.user?.id ?? "unknown user")", metadata: ["category": "insforge"])
    }

    /// A request with the session's access token; refused once with 401, it is repeated with a
    /// freshly refreshed token.
    func authenticated<T: Decodable>(_ type: T.Type, _ method: String, _ path: String, body: Data? = nil) async throws(InsForgeError) -> T {
        let token = try await getAccessToken()
        do {
            return try await api.call(type, method, path, body: body, bearer: token)
        } catch .backend(let answer) where answer.statusCode == 401 {
            logger.debug("the backend refused the access token; refreshing it once", metadata: ["category": "insforge"])
            let fresh = try await getAccessToken(forceRefresh: true)
            return try await api.call(type, method, path, body: body, bearer: fresh)
        }
    }

    static func require(email: String) throws(InsForgeError) {
        guard email.contains("@"), !email.contains(where: \.isWhitespace) else {
            throw .invalidInput("not an e-mail address")
        }
    }

    /// Checks that `code` is the 6-digit number the backend sends.
    static func require(sixDigitCode code: String, _ what: String) throws(InsForgeError) {
        guard code.utf8.count == 6, code.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw .invalidInput("\(what) must be 6 digits")
        }
    }
}
