import CCurl
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

/// The libcurl transport takes no proxy from the environment: with `http_proxy`,
/// `HTTPS_PROXY` or `ALL_PROXY` set, a POST carrying the client secret still goes to the token
/// endpoint, never in clear to whatever proxy the environment names. The environment is the
/// CLI's, in a process of its own: the test process's is shared by every test running beside it.
@Suite("libcurl transport: no proxy from the environment", .ownThread)
struct ProxyTests {
    @Test("credvault with http_proxy, https_proxy and ALL_PROXY set: the requests reach the provider, the proxy sees nothing")
    func environmentProxyIgnored() async throws {
        let provider = try ServiceTokenCLI.provider()
        let sniffer = try StubProvider { _ in .json(#"{"access_token":"from-the-proxy","token_type":"Bearer"}"#) }
        let proxy = "http://127.0.0.1:\(sniffer.port)"
        let (status, token, errors) = try await ServiceTokenCLI.run(
            provider, environment: ["http_proxy": proxy, "HTTPS_PROXY": proxy, "https_proxy": proxy, "ALL_PROXY": proxy])
        #expect(status == 0, "\(errors)")
        #expect(token.trimmingCharacters(in: .whitespacesAndNewlines) == ServiceTokenCLI.token)
        #expect(provider.requests(to: "/token").count == 1)
        #expect(sniffer.requests.isEmpty, "the proxy saw \(sniffer.requests.map(\.path))")
    }

    @Test("a libcurl option that is not accepted refuses the request with a typed error")
    func refusedOption() {
        let error = #expect(throws: AuthError.self) { try CurlTransfer.check("PROXY", CURLE_UNKNOWN_OPTION) }
        guard case .unsupported(let why)? = error else {
            Issue.record("expected unsupported, got \(String(describing: error))")
            return
        }
        #expect(why.contains("CURLOPT_PROXY") && why.contains("not sent"), "\(why)")
        #expect(throws: Never.self) { try CurlTransfer.check("PROXY", CURLE_OK) }
    }
}
