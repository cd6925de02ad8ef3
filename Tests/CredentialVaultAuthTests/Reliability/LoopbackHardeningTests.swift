import Logging
import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultAuth

/// Requests that do not carry the pending sign-in's `state` (from any local process or web
/// page) get an error page and the wait goes on; connections are served concurrently, each
/// within a whole-request deadline and a size limit; and the browser is opened at a one-time
/// loopback start URL, not at the authorization URL.
@Suite("loopback listener under attack", .ownThread)
struct LoopbackHardeningTests {
    static func get(_ url: URL) async throws -> HTTPResponse {
        try await URLSessionTransport().send(HTTPRequest(url: url, timeout: .seconds(5)))
    }

    /// What the browser opener was given, and what the forged requests got.
    final class Observations: Sendable {
        let opened = Recorder<URL>()
        let forged = Recorder<Int>()
    }

    /// A browser that follows the start page like a real one, reads state and redirect URI
    /// from the authorization URL, lets `attack` run against the listener's port, and then
    /// delivers `code=c` with that state.
    static func browser(_ seen: Observations, attack: @escaping @Sendable (_ port: UInt16) async throws -> Void) -> ClosureBrowserOpener {
        ClosureBrowserOpener { url in
            seen.opened.append(url)
            Task.detached {
                let authorization = try await TestBrowser.followStartPage(url)
                let parameters = FormEncoding.parameters(of: authorization)
                let redirect = try #require(parameters["redirect_uri"].flatMap(URL.init(string:)))
                try await attack(UInt16(redirect.port ?? 0))  // at the listener
                _ = try await get(URL(string: "\(redirect)?code=c&state=\(parameters["state"] ?? "")")!)
            }
        }
    }

    static func client() async throws -> (OIDCClient, StubProvider) {
        let stub = try StubProvider { request in request.path == "/token" ? StubOIDC.tokens() : .notFound }
        return (try await StubOIDC.client(stub), stub)
    }

    @Test("forged redirects (bogus state, error without state, error with a bogus state) get an error page; the sign-in goes on")
    func forgedRedirects() async throws {
        let (client, stub) = try await Self.client()
        let seen = Observations()
        let session = try await client.signIn(browser: Self.browser(seen) { port in
            for query in ["state=bogus&code=evil", "error=access_denied", "error=access_denied&state=bogus"] {
                seen.forged.append(try await Self.get(URL(string: "http://127.0.0.1:\(port)/callback?\(query)")!).status)
            }
        }, timeout: .seconds(10))
        #expect(session.accessToken == "at")
        #expect(seen.forged.all == [400, 400, 400])
        #expect(stub.requests(to: "/token").map { $0.form["code"] } == ["c"])
    }

    @Test("a client that sent part of a request and stalls does not hold up the redirect")
    func stalledClientDoesNotBlock() async throws {
        let listener = try LoopbackListener(port: .ephemeral, path: "/callback", logger: .credentialVaultSilent, requestTimeout: .seconds(60))
        defer { listener.close() }
        let waiting = Task { try await listener.waitForRedirect(state: "s", timeout: .seconds(60)) }
        let sent = Arrivals(), release = Gate()
        let stalled = Task {
            await RawClient.exchange(port: listener.port, chunks: [Data("GET /callback?state=s HTTP/1.1\r\n".utf8)], sent: sent, holdOpen: release)
        }
        #expect(await sent.reached(1), "the stalled client connected first and sent part of its request")
        let browser = Task { try await Self.get(URL(string: "\(listener.redirectURI)?state=s&code=c")!) }
        let arrival = try await waiting.value
        arrival.respond(success: true)
        #expect(FormEncoding.parameters(of: arrival.url)["code"] == "c")
        #expect(try await browser.value.status == 200)
        release.open()
        let slow = await stalled.value
        #expect(!slow.answeredWhileHeld, "the redirect was served only once the stalled request had ended: \(slow)")
    }

    @Test("the browser gets a one-time loopback start URL that carries nothing of the sign-in")
    func oneTimeStartURL() async throws {
        let (client, stub) = try await Self.client()
        defer { withExtendedLifetime(stub) {} }
        let seen = Observations()
        try await client.signIn(browser: Self.browser(seen) { _ in }, timeout: .seconds(10))
        let opened = try #require(seen.opened.all.first)
        #expect(opened.host == "127.0.0.1" && opened.path.hasPrefix("/start/") && opened.query == nil)
        for secret in ["state", "code_challenge", "nonce", "client_id"] { #expect(!opened.absoluteString.contains(secret)) }
    }

    @Test("someone else fetching the start page first makes the user's own request abort the sign-in")
    func startPageRace() async throws {
        let listener = try LoopbackListener(port: .ephemeral)
        defer { listener.close() }
        let start = listener.startURL(redirectingTo: URL(string: "https://idp.example/auth?state=s")!)
        let waiting = Task { try await listener.waitForRedirect(state: "s", timeout: .seconds(10)) }
        func get(_ path: String) async -> String {
            await RawClient.exchange(port: listener.port, chunks: [Data("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)]).response
        }
        let unknown = await get("/start/unknown")
        #expect(unknown.hasPrefix("HTTP/1.1 404"), "\(unknown)")
        #expect(await get(start.path).hasPrefix("HTTP/1.1 302 Found\r\nLocation: https://idp.example/auth?state=s\r\n"))  // the attacker, first
        #expect(await get(start.path).hasPrefix("HTTP/1.1 409"))  // the user's browser
        await #expect(throws: AuthError.stateMismatch) { _ = try await waiting.value }
    }

    @Test("each connection has a whole-request deadline and a size limit")
    func deadlineAndSizeLimit() async throws {
        let listener = try LoopbackListener(port: .ephemeral, path: "/callback", logger: .credentialVaultSilent, requestTimeout: .milliseconds(500))
        defer { listener.close() }
        let waiting = Task { try await listener.waitForRedirect(state: "good", timeout: .seconds(10)) }
        // A head that never ends (no blank line): only the listener's deadline can answer it.
        let drip = await RawClient.exchange(port: listener.port, chunks: RawClient.bytes("GET /callback?state=good HTTP/1.1\r\n"), pause: .milliseconds(100))
        #expect(drip.response.hasPrefix("HTTP/1.1 408"), "\(drip.response)")
        let huge = "GET /callback?state=good&pad=\(String(repeating: "x", count: 20_000)) HTTP/1.1\r\n\r\n"
        let oversized = await RawClient.exchange(port: listener.port, chunks: [Data(huge.utf8)])
        #expect(oversized.response.hasPrefix("HTTP/1.1 431"))
        let browser = Task { try await Self.get(URL(string: "\(listener.redirectURI)?state=good&code=c")!) }
        let arrival = try await waiting.value
        arrival.respond(success: true)
        #expect(FormEncoding.parameters(of: arrival.url)["code"] == "c")
        #expect(try await browser.value.status == 200)
    }
}
