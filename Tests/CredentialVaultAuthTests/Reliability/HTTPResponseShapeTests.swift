import Logging
import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

/// No response shape from a raw socket server can crash or stall the client's default
/// transport (FoundationNetworking's URLSession, the old default, stopped the process on
/// trailers: "Transfer completed, but there's no response"), and the response size limits are
/// enforced. Every shape is also sent through a client built with the default transport.
@Suite("HTTP response shapes (default transport)")
struct HTTPResponseShapeTests {
    static let json = #"{"access_token":"at","token_type":"Bearer","expires_in":3600}"#

    static func chunked(_ text: String) -> String { String(text.utf8.count, radix: 16) + "\r\n" + text + "\r\n" }

    static func raw(_ text: String) -> StubProvider.Reply { .raw([.bytes(Data(text.utf8))]) }

    /// The shapes, with what the client must make of them. (Computed, not a stored static:
    /// LeakSanitizer reports a lazily initialised global array of these as leaked.)
    static var shapes: [(String, StubProvider.Reply, Result<Int, AuthError>)] {
        [
        ("trailers", raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: grpc-status\r\nContent-Type: application/json\r\n\r\n"
            + chunked(json) + "0\r\ngrpc-status: 14\r\ngrpc-message: unavailable\r\n\r\n"), .success(200)),
        ("1xx before the answer", raw("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: \(json.utf8.count)\r\n\r\n\(json)"), .success(200)),
        ("malformed chunking", raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnot a chunk\r\n"), .failure(.networkError(""))),
        ("early close", raw("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{\"access_token\":"), .failure(.networkError(""))),
        ("nothing at all", .raw([]), .failure(.networkError(""))),
        ("garbage", raw("HELLO THERE\r\n\r\n"), .failure(.networkError(""))),
        ("oversized headers", raw("HTTP/1.1 200 OK\r\nX-Pad: \(String(repeating: "x", count: 100_000))\r\nContent-Length: 2\r\n\r\n{}"),
         .failure(.invalidResponse("the response headers are larger than 64 KiB"))),
        ("oversized body, announced", raw("HTTP/1.1 200 OK\r\nContent-Length: 10485760\r\n\r\n{\"access_token\":\"at\","),
         .failure(.invalidResponse(""))),
        ("oversized body, chunked", .raw([.bytes(Data("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))]
            + Array(repeating: .bytes(Data(chunked(String(repeating: "x", count: 16_384)).utf8)), count: 64)),
         .failure(.invalidResponse("the response is larger than 64 KiB"))),
        ]
    }

    /// Whether `result` is what `expected` says (for errors: the case, and the text when given).
    static func matches(_ result: Result<HTTPResponse, AuthError>, _ expected: Result<Int, AuthError>) -> Bool {
        switch (result, expected) {
        case (.success(let response), .success(let status)): return response.status == status
        case (.failure(.networkError), .failure(.networkError)): return true
        case (.failure(.invalidResponse(let why)), .failure(.invalidResponse(let wanted))): return wanted.isEmpty || why == wanted
        default: return false
        }
    }

    @Test("each shape is answered or refused, within the deadline", arguments: 0..<shapes.count)
    func shape(index: Int) async throws {
        let (name, reply, expected) = Self.shapes[index]
        let stub = try StubProvider { _ in reply }
        var request = HTTPRequest(method: "POST", url: stub.url("/token"), body: Data("a=b".utf8), timeout: .seconds(5))
        request.maximumResponseSize = ResponseLimit.token
        let result: Result<HTTPResponse, AuthError>
        do { result = .success(try await DefaultHTTPTransport.make().send(request)) } catch { result = .failure(error) }
        #expect(Self.matches(result, expected), "\(name): \(result)")  // a shape that stalled would be timedOut
    }

    @Test("a client built with the default transport survives trailers on its token endpoint")
    func clientSurvivesTrailers() async throws {
        let reply = Self.shapes[0].1
        let stub = try StubProvider { request in request.path == "/token" ? reply : .notFound }
        let client = try await OIDCClient(configuration: StubOIDC.configuration(stub), store: InMemoryStore(), logger: .credentialVaultSilent)
        #expect(try await StubOIDC.signIn(client).accessToken == "at")
    }

    /// With an empty chunked body the trailers came before any
    /// body byte and ended up in the headers (a trailer `Retry-After` was honoured), and a header
    /// line starting with `HTTP/` threw away the headers collected so far.
    @Test("the headers are the final head's: no trailers (empty chunked body), no reset on an HTTP/ header line, no 1xx fields")
    func finalHeadOnly() async throws {
        let replies = [
            "HTTP/1.1 429 Too Many\r\nTransfer-Encoding: chunked\r\nX-Real: 1\r\n\r\n0\r\nRetry-After: 7\r\nX-Injected: yes\r\n\r\n",
            "HTTP/1.1 200 OK\r\nCache-Control: max-age=5\r\nHTTP/evil: x\r\nX-Real: 1\r\nContent-Length: 2\r\n\r\n{}",
            "HTTP/1.1 103 Early Hints\r\nX-Injected: yes\r\n\r\nHTTP/1.1 200 OK\r\nX-Real: 1\r\nContent-Length: 2\r\n\r\n{}",
        ]
        for (index, text) in replies.enumerated() {
            let stub = try StubProvider { _ in Self.raw(text) }
            let response = try await DefaultHTTPTransport.make().send(HTTPRequest(url: stub.url("/x"), timeout: .seconds(5)))
            #expect(response.headers["x-real"] == "1", "reply \(index): \(response.headers)")
            #expect(response.headers["x-injected"] == nil && response.headers["retry-after"] == nil, "reply \(index): \(response.headers)")
            if index == 1 { #expect(response.headers["cache-control"] == "max-age=5") }
        }
    }

    /// These answers were once reported as "not an http(s) URL".
    @Test("an HTTP/0.9 answer or a status 099 is a malformed response, not a wrong URL")
    func malformedStatusLine() async throws {
        for text in ["HTTP/1.1 099 WAT\r\nContent-Length: 2\r\n\r\n{}", #"{"access_token":"x"}"#] {
            let stub = try StubProvider { _ in Self.raw(text) }
            let error = await #expect(throws: AuthError.self) {
                _ = try await DefaultHTTPTransport.make().send(HTTPRequest(url: stub.url("/x"), timeout: .seconds(5)))
            }
            guard case .networkError(let why)? = error else {
                Issue.record("\(text): \(String(describing: error))")
                continue
            }
            #expect(why.hasPrefix("malformed HTTP response"), "\(text): \(why)")
        }
        await #expect(throws: AuthError.networkError("not an http(s) URL")) {
            _ = try await DefaultHTTPTransport.make().send(HTTPRequest(url: URL(string: "gopher://127.0.0.1:9/x")!, timeout: .seconds(2)))
        }
    }

    @Test("a slow drip ends at the deadline, sub-second deadlines included", arguments: [Duration.milliseconds(400), .seconds(1)])
    func slowDrip(timeout: Duration) async throws {
        // 100 bytes, one per 100 ms: complete after 10 s, far past the deadline.
        let drip = StubProvider.Reply.raw([.bytes(Data("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n".utf8))]
            + Array(repeating: [.pause(.milliseconds(100)), .bytes(Data("x".utf8))], count: 100).flatMap { $0 })
        let stub = try StubProvider { _ in drip }
        try await withCeiling(.seconds(60), "a request with a \(timeout) deadline to a dripping server") {
            await #expect(throws: AuthError.timedOut) {
                _ = try await DefaultHTTPTransport.make().send(HTTPRequest(url: stub.url("/jwks"), timeout: timeout))
            }
        }
    }

    @Test("a prompt answer within a sub-second deadline is not refused")
    func subSecondDeadline() async throws {
        let stub = try StubProvider { _ in .json(Self.json) }
        let response = try await DefaultHTTPTransport.make().send(HTTPRequest(url: stub.url("/x"), timeout: .milliseconds(300)))
        #expect(response.status == 200 && response.headers["content-type"] == "application/json")
    }

    @Test("cancelling the caller ends the request while the server still holds its answer")
    func cancellation() async throws {
        let answer = Gate()
        defer { answer.open() }
        let stub = try StubProvider { _ in .raw([.wait(answer)]) }
        let task = Task { try await DefaultHTTPTransport.make().send(HTTPRequest(url: stub.url("/x"), timeout: .seconds(600))) }
        #expect(await stub.arrivals.reached(1), "the server has the request")
        task.cancel()
        // The server answers only when the test ends: the request must end on its cancellation.
        try await withCeiling(.seconds(60), "a cancelled request") {
            await #expect(throws: AuthError.cancelled) { _ = try await task.value }
        }
    }

    @Test("response size limits per kind: a 1 MiB token answer, a 300 KiB JWKS, a 300 KiB discovery document are refused")
    func limitsPerKind() async throws {
        let pad = String(repeating: "x", count: 300 * 1024)
        let stub = try StubProvider { request in
            switch request.path {
            case "/token": return .json(#"{"access_token":"at","token_type":"Bearer","pad":"\#(String(repeating: "y", count: 1 << 20))"}"#)
            case "/jwks": return .json(#"{"keys":[],"pad":"\#(pad)"}"#)
            case "/.well-known/openid-configuration": return .json(#"{"issuer":"x","token_endpoint":"https://x/token","pad":"\#(pad)"}"#)
            default: return .notFound
            }
        }
        let client = try await OIDCClient(configuration: StubOIDC.configuration(stub), store: InMemoryStore(), logger: .credentialVaultSilent)
        await #expect(throws: AuthError.invalidResponse("the response is larger than 64 KiB")) { try await StubOIDC.signIn(client) }
        await #expect(throws: AuthError.invalidResponse("the response is larger than 256 KiB")) {
            _ = try await client.verifyIDToken("a.b.c", nonce: nil)
        }
        let discovering = try await OIDCClient(
            configuration: OIDCConfiguration(issuer: URL(string: stub.base)!, clientID: "cli"), store: InMemoryStore(), logger: .credentialVaultSilent)
        let error = await #expect(throws: AuthError.self) { _ = try await discovering.metadata() }
        guard case .discoveryFailed? = error else {
            Issue.record("expected discoveryFailed, got \(String(describing: error))")
            return
        }
        #expect(error?.description.contains("larger than 256 KiB") == true)
    }
}
