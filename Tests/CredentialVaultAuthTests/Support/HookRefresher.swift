import CredentialVaultAuth
import Foundation

/// A provider that runs `hook` during each refresh (to change the store while a refresh is in
/// flight), then answers with a fresh hour-long session.
struct HookRefresher: SessionRefresher {
    let hook: @Sendable () async -> Void

    func refresh(_ session: AuthSession) async throws(AuthError) -> AuthSession {
        await hook()
        return AuthSession(
            accessToken: "access-hooked", refreshToken: "refresh-hooked", expiresAt: Date().addingTimeInterval(3600),
            user: session.user)
    }
}
