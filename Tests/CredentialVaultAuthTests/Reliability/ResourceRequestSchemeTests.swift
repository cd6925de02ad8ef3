import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

/// Where the session's access token may go: the rules of the provider's own endpoints
/// (https, plain http only on this machine) hold for resource requests too.
@Suite("resource requests over plain http", .ownThread)
struct ResourceRequestSchemeTests {
    /// A signed-in client whose requests to `/api` are answered 200 without reaching any network.
    static func client(dpop: Bool) async throws -> (OIDCClient, CountingTransport, StubProvider) {
        let type = dpop ? "DPoP" : "Bearer"
        let stub = try StubProvider { _ in .json(#"{"access_token":"at","token_type":"\#(type)","expires_in":3600}"#) }
        let transport = CountingTransport()
        transport.inject(.init(pathSuffix: "/api", remaining: 10, outcome: .success(HTTPResponse(status: 200))))
        var configuration = StubOIDC.configuration(stub)
        configuration.dpop = dpop
        let client = try await OIDCClient(configuration: configuration, store: InMemoryStore(), transport: transport, logger: .credentialVaultSilent)
        try await StubOIDC.signIn(client)
        return (client, transport, stub)
    }

    @Test("the access token is neither sent nor put in headers for a plain-http URL off this machine", arguments: [false, true])
    func plainHTTPOffMachineRefused(dpop: Bool) async throws {
        let (client, transport, stub) = try await Self.client(dpop: dpop)
        let remote = URL(string: "http://api.example.com/api")!
        await #expect(throws: AuthError.self) { _ = try await client.authorizationHeaders(for: remote, method: "GET") }
        await #expect(throws: AuthError.self) { _ = try await client.send(authorized: HTTPRequest(url: remote, timeout: .seconds(5))) }
        #expect(transport.requests(pathSuffix: "/api") == 0)
        // https anywhere and plain http on this machine still work.
        #expect(try await client.authorizationHeaders(for: URL(string: "https://api.example.com/api")!, method: "GET").count >= 1)
        #expect(try await client.send(authorized: HTTPRequest(url: stub.url("/api"), timeout: .seconds(5))).status == 200)
    }
}
