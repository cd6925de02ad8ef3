import CredentialVault
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultAuth

/// Concurrent first requests of one `ProtectedResourceClient`: they share the preparation; the
/// sign-in that follows should be shared as well.
@Suite("MCP client profile: concurrent first requests")
struct ProtectedResourceConcurrentSendTests {
    /// A browser that counts how often it is asked to open, holds each sign-in a moment (so
    /// that a concurrent one overlaps it), then gives up.
    final class CountingBrowser: BrowserOpener, Sendable {
        let opens = Mutex(0)
        func open(_ url: URL) async throws(AuthError) {
            opens.withLock { $0 += 1 }
            try? await Task.sleep(for: .milliseconds(800))
            throw .cancelled
        }
    }

    @Test("two concurrent first requests to a resource open one sign-in, not one each")
    func concurrentFirstRequestsShareOneSignIn() async throws {
        let stub = try StubProvider { request in
            let base = "http://127.0.0.1:\(request.headers["host"]?.split(separator: ":").last ?? "0")"
            switch request.path {
            case "/.well-known/oauth-protected-resource/mcp":
                return .json(#"{"resource":"\#(base)/mcp","authorization_servers":["\#(base)"],"scopes_supported":["mcp"]}"#)
            case "/.well-known/oauth-authorization-server":
                return .json(
                    #"{"issuer":"\#(base)","authorization_endpoint":"\#(base)/authorize","token_endpoint":"\#(base)/token","jwks_uri":"\#(base)/jwks"}"#)
            case "/mcp": return .http(status: 401, headers: ["WWW-Authenticate": "Bearer"], body: Data())
            default: return .notFound
            }
        }
        defer { stub.close() }
        let client = try ProtectedResourceClient(
            configuration: ProtectedResourceConfiguration(
                resource: stub.url("/mcp"), redirect: LoopbackRedirect(port: .ephemeral), clientID: "pre", requestTimeout: .seconds(5)),
            store: InMemoryStore())
        let browser = CountingBrowser()
        let request = HTTPRequest(url: stub.url("/mcp"), timeout: .seconds(5))
        async let one = try? await client.send(request, browser: browser, timeout: .seconds(5))
        async let two = try? await client.send(request, browser: browser, timeout: .seconds(5))
        _ = await (one, two)
        // Today each caller runs its own sign-in: two browser windows (and, with a fixed
        // redirect port, the second fails to bind it).
        #expect(browser.opens.withLock { $0 } == 1, "one sign-in for both callers")
    }
}
