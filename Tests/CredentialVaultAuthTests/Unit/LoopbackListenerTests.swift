import Foundation
import Testing

@testable import CredentialVaultAuth

@Suite("loopback redirect listener")
struct LoopbackListenerTests {
    static func get(_ url: String) async throws -> HTTPResponse {
        try await URLSessionTransport().send(HTTPRequest(url: URL(string: url)!, timeout: .seconds(5)))
    }

    @Test("binds 127.0.0.1 on an ephemeral port; ignores other paths and requests without state; answers the page")
    func receivesRedirect() async throws {
        let listener = try LoopbackListener(port: .ephemeral, path: "/cb")
        defer { listener.close() }
        #expect(listener.port > 0)
        #expect(listener.redirectURI == "http://127.0.0.1:\(listener.port)/cb")
        let base = "http://127.0.0.1:\(listener.port)"
        let browser = Task {
            let wrongPath = try await Self.get("\(base)/favicon.ico")
            let noState = try await Self.get("\(base)/cb")
            let redirect = try await Self.get("\(base)/cb?code=abc&state=xyz")
            return (wrongPath.status, noState.status, redirect.status, String(decoding: redirect.body, as: UTF8.self))
        }
        let arrival = try await listener.waitForRedirect(timeout: .seconds(10))
        #expect(FormEncoding.parameters(of: arrival.url)["code"] == "abc")
        #expect(FormEncoding.parameters(of: arrival.url)["state"] == "xyz")
        arrival.respond(success: true)
        let (wrongPath, noState, status, page) = try await browser.value
        #expect(wrongPath == 404)
        #expect(noState == 400)
        #expect(status == 200)
        #expect(page.contains("You can close this window"))
    }

    @Test("a failed sign-in shows an error page with the (escaped) reason")
    func failurePage() async throws {
        let listener = try LoopbackListener(port: .ephemeral)
        defer { listener.close() }
        let browser = Task { try await Self.get("http://127.0.0.1:\(listener.port)/callback?error=access_denied&state=s") }
        let arrival = try await listener.waitForRedirect(timeout: .seconds(10))
        arrival.respond(success: false, message: "<denied>")
        let response = try await browser.value
        #expect(response.status == 400)
        let page = String(decoding: response.body, as: UTF8.self)
        #expect(page.contains("&lt;denied&gt;") && !page.contains("<denied>"))
    }

    @Test("waiting ends at the deadline with timedOut, and on cancellation with cancelled")
    func deadlineAndCancellation() async throws {
        let listener = try LoopbackListener(port: .ephemeral)
        defer { listener.close() }
        let started = ContinuousClock.now
        await #expect(throws: AuthError.timedOut) { _ = try await listener.waitForRedirect(timeout: .milliseconds(300)) }
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        let waiting = Task { try await listener.waitForRedirect(timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(100))
        waiting.cancel()
        let cancelledAt = ContinuousClock.now
        await #expect(throws: AuthError.cancelled) { _ = try await waiting.value }
        #expect(ContinuousClock.now - cancelledAt < .seconds(2))
    }

    @Test("a fixed port that is taken is reported, not silently replaced")
    func fixedPortInUse() throws {
        let first = try LoopbackListener(port: .ephemeral)
        defer { first.close() }
        #expect(throws: AuthError.self) { _ = try LoopbackListener(port: .fixed(first.port)) }
        first.close()
        let second = try LoopbackListener(port: .fixed(first.port))
        #expect(second.port == first.port)
    }

    @Test("a POST is refused with 405")
    func postRefused() async throws {
        let listener = try LoopbackListener(port: .ephemeral)
        defer { listener.close() }
        let waiting = Task { try? await listener.waitForRedirect(timeout: .seconds(5)) }
        let response = try await URLSessionTransport().send(HTTPRequest(
            method: "POST", url: URL(string: "http://127.0.0.1:\(listener.port)/callback?state=s")!, body: Data("x".utf8),
            timeout: .seconds(5)))
        #expect(response.status == 405)
        waiting.cancel()
        #expect(await waiting.value == nil)
    }
}
