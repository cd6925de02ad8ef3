import CredentialVault
import Foundation

/// What a started sign-in must remember until its redirect: stored as an ephemeral,
/// device-only credential keyed by `state`, consumed with `take` (single use), so that it
/// survives a process restart (a custom-scheme redirect starts a new process) and several
/// sign-ins can be pending at once.
struct PendingAuthorization: Codable, Sendable {
    var verifier: String
    var nonce: String
    var redirectURI: String
    var issuer: String
    var clientID: String
    var createdAt: Date
    /// Whether this sign-in asked for `openid` (its own scopes, not the configuration's), so
    /// that an ID token is required. `nil` in records written before it existed.
    var requestsOpenID: Bool? = nil
    /// The DPoP key (PKCS#8 PEM) whose thumbprint went out as `dpop_jkt`: the code is bound to
    /// it, and it becomes the session's key. `nil` without DPoP.
    var dpopKey: String? = nil

    func save(under key: CredentialKey, in store: any AsyncTokenStorageAdapter, ttl: Duration) async throws(AuthError) {
        var data: Data
        do { data = try JSONEncoder.session.encode(self) } catch { throw .invalidResponse("pending sign-in not encodable") }
        defer { data.resetBytes(in: 0..<data.count) }
        do { try await store.save(data, for: key, options: .ephemeral(ttl: ttl)) } catch { throw SessionStorage.map(error) }
    }

    /// Reads the pending sign-in without consuming it (to check that a redirect belongs to
    /// it before `take` spends it); `nil` when unknown or already used.
    static func peek(_ key: CredentialKey, from store: any AsyncTokenStorageAdapter) async throws(AuthError) -> PendingAuthorization? {
        try await decode { () async throws(CredentialVaultError) in try await store.load(key) }
    }

    /// Takes (reads and deletes) the pending sign-in; `nil` when unknown or already used.
    static func take(_ key: CredentialKey, from store: any AsyncTokenStorageAdapter) async throws(AuthError) -> PendingAuthorization? {
        try await decode { () async throws(CredentialVaultError) in try await store.take(key) }
    }

    private static func decode(
        _ read: () async throws(CredentialVaultError) -> Data?
    ) async throws(AuthError) -> PendingAuthorization? {
        let data: Data?
        do { data = try await read() } catch .expired { throw .authorizationExpired } catch { throw SessionStorage.map(error) }
        guard let data else { return nil }
        do { return try OutsideJSON.decode(PendingAuthorization.self, from: data, using: .session) } catch {
            throw .storage(.corrupted("a pending sign-in is unreadable; start the sign-in again"))
        }
    }
}

/// A started sign-in: send the user's browser to `url`, then hand the redirect to
/// `OIDCClient.handleRedirect(url:)`.
public struct AuthorizationRequest: Sendable, CustomStringConvertible {
    /// The authorization URL to open in the browser.
    public let url: URL
    /// The `state` sent with it (identifies the pending sign-in).
    public let state: String
    /// The registered redirect URI the provider will send the browser back to.
    public let redirectURI: String
    /// When the pending sign-in expires.
    public let expiresAt: Date
    /// With PAR (RFC 9126), when the request URI in `url` expires: open `url` before then (the
    /// provider refuses it afterwards). `nil` for a plain authorization request.
    public var requestURIExpiresAt: Date? = nil
    /// With PAR, the monotonic instant by which the loopback start page must send the browser on.
    var openBy: ContinuousClock.Instant? = nil

    /// The redirect URI and expiry (the URL carries state and nonce, so it is not shown).
    public var description: String {
        "AuthorizationRequest(redirect: \(redirectURI), expires: \(expiresAt)"
            + (requestURIExpiresAt.map { ", request URI expires: \($0)" } ?? "") + ")"
    }
}
