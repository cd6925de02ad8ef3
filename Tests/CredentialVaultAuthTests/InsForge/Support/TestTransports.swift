import CredentialVaultAuth
import Foundation
import Synchronization

/// A browser for OAuth tests: "opens" a URL by following its redirects in the background
/// (the fake provider's consent page, the backend's callback) until they reach the app's
/// redirect URI, like a real browser would; `rewrite` may alter the URL first.
final class FollowingBrowser: BrowserOpener {
    /// Alters the authorization URL before it is followed.
    let rewrite: @Sendable (URL) -> URL
    /// Whether to request the final URL (the loopback listener) or just record it.
    let deliver: Bool
    private let landing = Mutex<[URL]>([])

    init(deliver: Bool = true, rewrite: @escaping @Sendable (URL) -> URL = { $0 }) {
        self.deliver = deliver
        self.rewrite = rewrite
    }

    /// Where the redirect chains ended (the app's redirect URLs), when not delivered.
    var landed: [URL] { landing.withLock { $0 } }

    func open(_ url: URL) async throws(AuthError) {
        let start: URL
        do { start = rewrite(try await TestBrowser.followStartPage(url)) } catch {
            throw .invalidResponse("the loopback start page did not redirect")
        }
        let follow = self
        if deliver {
            Task.detached { _ = try? await follow.run(start) }  // as a browser: open returns at once
        } else {
            let final = try await run(start)
            landing.withLock { $0.append(final) }
        }
    }

    /// Follows redirects from `url`; returns the first URL that is not the backend's or the
    /// provider's (after requesting it when `deliver`).
    @discardableResult
    func run(_ url: URL) async throws(AuthError) -> URL {
        let http = URLSessionTransport()
        var current = url
        for _ in 0..<10 {
            let isServer = current.path.contains("/api/auth/") || current.path.contains("/__test__/")
            if !isServer || current.scheme != "http" {
                if deliver, current.scheme == "http" {
                    _ = try await http.send(HTTPRequest(url: current, timeout: .seconds(30)))
                }
                return current
            }
            let response = try await http.send(HTTPRequest(url: current, timeout: .seconds(10)))
            guard (300..<400).contains(response.status), let location = response.headers["location"],
                let next = URL(string: location, relativeTo: current)?.absoluteURL
            else {
                throw .invalidResponse("the OAuth redirect chain stopped at HTTP \(response.status)")
            }
            current = next
        }
        throw .invalidResponse("too many redirects")
    }
}
