import CredentialVault
import Foundation

/// The InsForge side of the session manager: `POST /api/auth/refresh` with the refresh token
/// in the body (a new access and refresh token each time), and `POST /api/auth/logout` at
/// sign-out (desktop and server clients have no server-side logout state; the session manager
/// has already deleted the stored tokens).
struct InsForgeRefresher: SessionRefresher {
    let api: InsForgeAPI
    /// The source of "now" for the session's `obtainedAt` (the due rule measures lifetimes from it).
    let clock: any CredentialClock

    func refresh(_ session: AuthSession) async throws(AuthError) -> AuthSession {
        guard let refreshToken = session.refreshToken else {
            throw .unsupported("the session has no refresh token: sign in again")
        }
        do {
            let body = try InsForgeAPI.json(["refreshToken": refreshToken])
            let response = try await api.call(InsForgeAuthResponse.self, "POST", "/refresh", query: api.clientType, body: body)
            return Self.session(from: response, previous: session, now: clock.now())
        } catch {
            throw error.refreshFailure
        }
    }

    func revoke(_ session: AuthSession) async throws(AuthError) {
        do { _ = try await api.send("POST", "/logout", query: api.clientType, bearer: session.accessToken) } catch {
            throw error.refreshFailure
        }
    }

    /// The session for a sign-in or refresh answer. The expiry is read from the access token's
    /// `exp` claim (unverified: it only schedules refreshes); the user and refresh token of
    /// `previous` are kept when the answer lacks them.
    static func session(from response: InsForgeAuthResponse, previous: AuthSession? = nil, now: Date) -> AuthSession {
        AuthSession(
            accessToken: response.accessToken, refreshToken: response.refreshToken ?? previous?.refreshToken,
            expiresAt: expiry(of: response.accessToken, now: now), user: response.user?.authUser ?? previous?.user, obtainedAt: now)
    }

    /// The `exp` of a JWT access token, `nil` for an opaque token or a non-finite `exp`. Like
    /// `expires_in`, the lifetime it implies is clamped to 0 ... `ServerNumber.maximumLifetime`
    /// (a year): an `exp` in the past (clock skew) is a token expiring at once, and no `exp`
    /// reaches `Date` or `Duration` arithmetic, or the stored session's JSON, unchecked.
    static func expiry(of accessToken: String, now: Date) -> Date? {
        guard let token = try? JSONWebToken(compactSerialization: accessToken), let exp = token.claims["exp"]?.numberValue,
            exp.isFinite
        else {
            return nil
        }
        let lifetime = exp - now.timeIntervalSince1970
        return now.addingTimeInterval(min(max(lifetime, 0), ServerNumber.maximumLifetime))
    }
}
