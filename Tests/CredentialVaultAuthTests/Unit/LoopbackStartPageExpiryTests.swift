import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

/// A start page with an `openBy` (a PAR request URI's expiry) sends the browser on only until
/// then: a late request gets the expiry, never the dead authorization URL.
@Suite("loopback start page with an expiry")
struct LoopbackStartPageExpiryTests {
    static func token(_ url: URL) -> String { url.lastPathComponent }

    @Test("before openBy the start page redirects once; after it, it is expired; without openBy it never expires")
    func takeStartPage() throws {
        let listener = try LoopbackListener(port: .ephemeral)
        defer { listener.close() }
        let target = URL(string: "https://idp.example/auth?client_id=cli&request_uri=urn:x")!
        let live = listener.startURL(redirectingTo: target, openBy: .now + .seconds(600))
        guard case .first(let url) = listener.takeStartPage(Self.token(live)) else { Issue.record("a live start page was refused"); return }
        #expect(url == target)
        let dead = listener.startURL(redirectingTo: target, openBy: .now - .seconds(1))
        #expect(listener.hasExpiredStartPage())
        guard case .expired = listener.takeStartPage(Self.token(dead)) else { Issue.record("an expired start page was served"); return }
        #expect(!listener.hasExpiredStartPage())
        let plain = listener.startURL(redirectingTo: target)
        #expect(!listener.hasExpiredStartPage())
        guard case .first = listener.takeStartPage(Self.token(plain)) else { Issue.record("a start page without expiry was refused"); return }
    }

    @Test("a wait whose start page expired unopened ends with authorizationExpired")
    func waitEnds() async throws {
        let listener = try LoopbackListener(port: .ephemeral)
        defer { listener.close() }
        _ = listener.startURL(redirectingTo: URL(string: "https://idp.example/auth")!, openBy: .now + .milliseconds(200))
        try await withCeiling(.seconds(60), "the wait") {
            await #expect(throws: AuthError.authorizationExpired) { try await listener.waitForRedirect(state: "s", timeout: .seconds(3600)) }
        }
    }
}
