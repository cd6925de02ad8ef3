import CCurl
import Foundation
import Testing

@testable import CredentialVaultAuth

#if canImport(Glibc)
import Glibc
#endif

/// Finding F1 of the third review of issue 12: libcurl took its proxy from `http_proxy`,
/// `HTTPS_PROXY` and `ALL_PROXY`, so a POST with the client secret and refresh token went to
/// whatever proxy the environment named, in clear, and its reply was accepted.
@Suite("libcurl transport: no proxy from the environment", .serialized)
struct ProxyTests {
    /// Runs `body` with the environment variables set, restoring them afterwards.
    static func withEnvironment<T>(_ values: [String: String], _ body: () async throws -> T) async rethrows -> T {
        let saved = values.keys.map { ($0, getenv($0).map { String(cString: $0) }) }
        for (name, value) in values { setenv(name, value, 1) }
        defer {
            for (name, value) in saved {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
        return try await body()
    }

    @Test("with http_proxy and ALL_PROXY set, the request reaches the real server and the proxy sees nothing")
    func environmentProxyIgnored() async throws {
        let real = try StubProvider { _ in .json(#"{"access_token":"real"}"#) }
        let sniffer = try StubProvider { _ in .json(#"{"access_token":"from-the-proxy"}"#) }
        let proxy = "http://127.0.0.1:\(sniffer.port)"
        let response = try await Self.withEnvironment(["http_proxy": proxy, "ALL_PROXY": proxy, "https_proxy": proxy]) {
            let request = HTTPRequest(
                method: "POST", url: real.url("/token"), body: Data("client_secret=S3CRET&refresh_token=RT".utf8), timeout: .seconds(5))
            return try await CurlTransport().send(request)
        }
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"access_token":"real"}"#)
        #expect(real.requests.count == 1)
        #expect(sniffer.requests.isEmpty)
    }

    @Test("a libcurl option that is not accepted refuses the request with a typed error")
    func refusedOption() {
        #expect(throws: AuthError.self) { try CurlTransfer.check("PROXY", CURLE_UNKNOWN_OPTION) }
        #expect(throws: Never.self) { try CurlTransfer.check("PROXY", CURLE_OK) }
    }
}
