import CredentialVault
import Foundation

/// How an `InsForgeClient` reaches its backend and keeps its session.
public struct InsForgeConfiguration: Sendable {
    /// The backend's base URL (`https://<app>.insforge.app`); the auth API is under `/api/auth`.
    public var baseURL: URL
    /// How the client identifies itself (`client_type`): `.desktop` (default) or `.server`, so
    /// that the refresh token comes back in the response body.
    public var clientType: InsForgeClientType
    /// The project's anon key, sent as a Bearer token on sign-up (the backend requires it there,
    /// the contract does not say so). `nil` when the app has none.
    public var anonKey: String?
    /// The deadline of every single HTTP exchange (default 30 s).
    public var requestTimeout: Duration
    /// How long a started OAuth sign-in (its PKCE verifier) stays valid (default 10 minutes).
    public var pendingOAuthTTL: Duration
    /// The credential service under which the session and pending OAuth sign-ins are stored.
    public var storageService: String
    /// Where the session may be read (default `.deviceOnly`).
    public var sessionAccessibility: Accessibility
    /// The session manager's tuning (refresh margin, retries, background refresh).
    public var session: SessionManager.Configuration
    /// Accept a plain-http backend that is not on this machine (default `false`: passwords and
    /// tokens would cross the network in clear; http is accepted only for 127.0.0.1, ::1 and
    /// localhost).
    public var allowsInsecureHTTP: Bool

    /// Creates a configuration with the defaults above.
    public init(
        baseURL: URL, clientType: InsForgeClientType = .desktop, anonKey: String? = nil,
        requestTimeout: Duration = .seconds(30), pendingOAuthTTL: Duration = .seconds(600),
        storageService: String = "credential-vault.insforge", sessionAccessibility: Accessibility = .deviceOnly,
        session: SessionManager.Configuration = .init(), allowsInsecureHTTP: Bool = false
    ) {
        self.baseURL = baseURL
        self.clientType = clientType
        self.anonKey = anonKey
        self.requestTimeout = requestTimeout
        self.pendingOAuthTTL = pendingOAuthTTL
        self.storageService = storageService
        self.sessionAccessibility = sessionAccessibility
        self.session = session
        self.allowsInsecureHTTP = allowsInsecureHTTP
    }

    /// The base URL without a trailing slash, as sessions and pending sign-ins record it.
    var backendIdentifier: String {
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// Where the session of this backend is stored.
    public var sessionKey: CredentialKey {
        CredentialKey(
            service: storageService, account: "session@\(backendIdentifier)",
            label: "InsForge session at \(backendIdentifier)")
    }

    /// Where the pending OAuth sign-in with this `state` is stored (ephemeral, device-only).
    func pendingKey(state: String) -> CredentialKey {
        CredentialKey(service: storageService + ".pending", account: state)
    }

    /// Where the backend may send the browser (`authUrl`): https, or loopback http for a loopback http backend.
    var endpointPolicy: EndpointPolicy { EndpointPolicy(issuer: baseURL, allowsInsecureHTTP: allowsInsecureHTTP) }

    func validate() throws(InsForgeError) {
        guard let scheme = baseURL.scheme?.lowercased(), scheme == "https" || scheme == "http", baseURL.host != nil,
            baseURL.query == nil, baseURL.fragment == nil
        else {
            throw .invalidInput("the base URL must be an http(s) URL without query or fragment")
        }
        if scheme == "http" && !EndpointPolicy.isLoopback(baseURL.host) && !allowsInsecureHTTP {
            throw .invalidInput("the base URL must use https (plain http is accepted only on this machine)")
        }
        guard !storageService.isEmpty else { throw .invalidInput("the storage service is empty") }
        guard requestTimeout > .zero, pendingOAuthTTL > .zero else { throw .invalidInput("timeouts must be positive") }
    }
}

/// The `client_type` the client sends: the kinds that receive the refresh token in the body.
public enum InsForgeClientType: String, Sendable, Hashable, CaseIterable {
    /// A desktop application (the default).
    case desktop
    /// A server-side application.
    case server
}
