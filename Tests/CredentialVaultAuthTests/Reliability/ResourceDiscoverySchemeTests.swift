import Foundation
import Testing

@testable import CredentialVaultAuth

/// A protected resource's metadata names its authorization servers: hostile input that must
/// not steer an https resource's client to plain http, not even on this machine.
@Suite("resource discovery scheme rules", .ownThread)
struct ResourceDiscoverySchemeTests {
    @Test("an https resource naming a plain-http authorization server on this machine is refused before that server is asked")
    func httpsResourceToLoopbackHTTPServerRefused() async throws {
        let stub = try StubProvider { request in
            switch request.path {
            case "/.well-known/oauth-protected-resource/mcp":
                return .json(#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["http://127.0.0.1:9/"]}"#)
            case "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration":
                return .json(#"{"issuer":"http://127.0.0.1:9/","authorization_endpoint":"http://127.0.0.1:9/a","token_endpoint":"http://127.0.0.1:9/t","jwks_uri":"http://127.0.0.1:9/j"}"#)
            default: return .notFound
            }
        }
        let discovery = ResourceAuthorizationDiscovery(transport: RoutingTransport(stub: stub))
        await #expect(throws: AuthError.self) {
            _ = try await discovery.discover(resource: URL(string: "https://mcp.example.com/mcp")!, challenge: nil)
        }
        #expect(stub.requests(to: "/.well-known/oauth-protected-resource/mcp").count == 1)
        #expect(stub.requests(to: "/.well-known/oauth-authorization-server").isEmpty)
        #expect(stub.requests(to: "/.well-known/openid-configuration").isEmpty)
    }
}
