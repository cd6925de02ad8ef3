import Logging
import CredentialVaultTestSupport
import CredentialVaultTesting
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
        try await withCeiling(.seconds(60), "a 300 ms wait for a redirect that never comes") {
            await #expect(throws: AuthError.timedOut) { _ = try await listener.waitForRedirect(timeout: .milliseconds(300)) }
        }
        let waiting = Task { try await listener.waitForRedirect(timeout: .seconds(600)) }
        // The wait is running once it answers a request that is not the redirect.
        #expect(try await Self.get("http://127.0.0.1:\(listener.port)/favicon.ico").status == 404)
        waiting.cancel()
        try await withCeiling(.seconds(60), "a cancelled 600 s wait") {
            await #expect(throws: AuthError.cancelled) { _ = try await waiting.value }
        }
    }

    @Test("waiting listeners block no thread the app shares: with 160 sign-ins waiting at once, Swift's pool keeps running")
    func waitsBlockNoSharedThread() async throws {
        // Each wait polls its socket on a thread of its own until its redirect comes. On
        // Dispatch's pool (which Swift's runs on, on Linux), 160 of them would stall every task
        // while Dispatch added a thread a second.
        let listeners = try (0..<160).map { _ in try LoopbackListener(port: .ephemeral, logger: .credentialVaultSilent) }
        defer { for listener in listeners { listener.close() } }
        let heartbeat = Heartbeat.start()
        let waits = listeners.map { listener in Task { try await listener.waitForRedirect(state: "s", timeout: .seconds(600)) } }
        #expect(await heartbeat.beats(50), "the pool stalled while 160 sign-ins waited")
        // Each wait is running: it answers a request that is not its redirect.
        let answers = try await withThrowingTaskGroup(of: Int.self) { group in
            for listener in listeners.prefix(16) { group.addTask { try await Self.get("http://127.0.0.1:\(listener.port)/other").status } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(answers == Array(repeating: 404, count: 16))
        for wait in waits { wait.cancel() }
        for wait in waits { await #expect(throws: AuthError.cancelled) { _ = try await wait.value } }
        await heartbeat.stop()
    }

    @Test("a fixed port that is taken is reported, not silently replaced")
    func fixedPortInUse() throws {
        // Below the kernel's ephemeral range: once closed, no port-0 bind of a test running in
        // parallel can take it before the second listener does (from the range, one did).
        let first = try Self.listenerBelowEphemeralRange()
        defer { first.close() }
        #expect(throws: AuthError.unsupported("cannot listen on 127.0.0.1:\(first.port) (port in use)")) {
            _ = try LoopbackListener(port: .fixed(first.port))
        }
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

    /// A listener on a free port below `ip_local_port_range`, which the kernel never hands out
    /// for a port-0 bind.
    static func listenerBelowEphemeralRange() throws -> LoopbackListener {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? "32768"
        let low = range.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap { Int($0) } ?? 32768
        let candidates = max(1024, low - 8000)..<max(1025, low)
        for _ in 0..<200 {
            if let listener = try? LoopbackListener(port: .fixed(UInt16(Int.random(in: candidates)))) { return listener }
        }
        throw AuthError.unsupported("no free port below the ephemeral range")
    }
}
