import CredentialVaultTestSupport
import Foundation

@testable import CredentialVaultAuth

/// Forwards to the provider, but holds the answer to each refresh request (OpenID
/// `grant_type=refresh_token`, InsForge `/api/auth/refresh`) until the test opens `answer`:
/// the provider has refreshed, the client does not know it yet. Each refresh request arrives
/// at `refreshes` once it was sent, so a test can act while the refresh is in flight (sign out,
/// send more callers) and then let it land.
final class HeldRefreshTransport: HTTPTransport {
    private let inner = URLSessionTransport()
    /// Every refresh request arrives here once the provider has it.
    let refreshes = Arrivals()
    /// Opened by the test: the held answers go on.
    let answer = Gate()

    func send(_ request: HTTPRequest) async throws(AuthError) -> HTTPResponse {
        let isRefresh = request.body.map { String(decoding: $0, as: UTF8.self).contains("grant_type=refresh_token") } ?? false
            || request.url.path.hasSuffix("/api/auth/refresh")  // InsForge
        guard isRefresh else { return try await inner.send(request) }
        let response = try await inner.send(request)
        refreshes.arrive()
        do { try await answer.wait() } catch { throw .cancelled }
        return response
    }
}
