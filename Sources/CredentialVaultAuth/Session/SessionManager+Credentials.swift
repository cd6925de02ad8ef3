import CredentialVault
import Foundation

/// `credentials(minTTL:)`: a session whose access token stays valid for a while, as Auth0's
/// `CredentialsManager.credentials(minTTL:)` gives (for a long upload, a token handed to
/// another process).
extension SessionManager {
    /// The stored session, with an access token valid for at least `minTTL` from now: refreshed
    /// first when less than that is left (or when it is due anyway). A token whose expiry is
    /// unknown counts as lasting.
    /// - Throws: `tokenLifetimeTooShort` when even a fresh token lives no longer than `minTTL`
    ///   (after one refresh; later calls know the provider's lifetime and make no request, nor
    ///   is one made for a token obtained within `minimumRefreshInterval`);
    ///   `unsupported` when it would need a refresh and the session has no refresh token;
    ///   otherwise what `getSession()` throws.
    public func credentials(minTTL: Duration) async throws(AuthError) -> AuthSession {
        let minTTL = max(minTTL, .zero)  // a negative one asks nothing more than a valid token
        let stored = try await requireStored()
        let now = clock.now()
        guard !Self.lasts(stored, minTTL, at: now) else { return try await current(stored) }
        guard stored.refreshToken != nil else {
            _ = try await current(stored)  // an expired one is removed: notSignedIn
            throw .unsupported("the access token expires within minTTL and the session has no refresh token: sign in again")
        }
        // No refresh can give what is asked when the provider's tokens live no longer than
        // minTTL (as the last one refreshed here did), nor when the stored token is fresh
        // (obtained within the floor) and does not: each attempt would be a forced request,
        // and a rotated refresh token, for nothing.
        let justObtained = now.timeIntervalSince(stored.obtainedAt) < configuration.minimumRefreshInterval.secondsValue
        if let lifetime = justObtained ? Self.lifetime(of: stored) : refreshedLifetime, lifetime <= minTTL {
            throw .tokenLifetimeTooShort(lifetime: lifetime, minTTL: minTTL)
        }
        let session = try await refresh(seen: stored, force: true)
        refreshedLifetime = Self.lifetime(of: session)
        guard Self.lasts(session, minTTL, at: clock.now()) else {
            throw .tokenLifetimeTooShort(lifetime: Self.lifetime(of: session) ?? .zero, minTTL: minTTL)
        }
        return session
    }

    /// Whether `session`'s access token is still valid `minTTL` after `now`.
    static func lasts(_ session: AuthSession, _ minTTL: Duration, at now: Date) -> Bool {
        guard let expiry = session.expiresAt else { return true }
        return expiry.timeIntervalSince(now) >= minTTL.secondsValue
    }

    /// How long `session`'s access token lives from when it was obtained (`nil`: unknown).
    static func lifetime(of session: AuthSession) -> Duration? {
        session.expiresAt.map { .clamped(seconds: max(0, $0.timeIntervalSince(session.obtainedAt))) }
    }
}
