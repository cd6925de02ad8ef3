import Foundation
import Testing

@testable import CredentialVaultAuth

/// Client metadata goes to the provider and into its client records: never a private key.
@Suite("registration never sends private keys", .ownThread)
struct RegistrationPrivateKeyTests {
    static let publicEC: [String: JSONValue] = [
        "kty": .string("EC"), "crv": .string("P-256"), "kid": .string("k1"),
        "x": .string("f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"), "y": .string("x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"),
    ]

    @Test("a jwks holding a private or symmetric key is refused before anything is sent; public keys go through")
    func privateKeyMaterialRefused() async throws {
        let stub = try StubProvider { _ in .json(#"{"client_id":"c1"}"#, status: 201) }
        let registration = try ClientRegistration(endpoint: stub.url("/register"))
        var privateEC = Self.publicEC
        privateEC["d"] = .string("jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI")
        let leaking = [
            ClientMetadata(redirectURIs: [], jwks: .object(["keys": .array([.object(privateEC)])])),
            ClientMetadata(redirectURIs: [], additional: ["jwks": .object(["keys": .array([.object(["kty": .string("oct"), "k": .string("c2VjcmV0")])])])]),
        ]
        for metadata in leaking {
            await #expect(throws: AuthError.self) { _ = try await registration.register(metadata) }
            let client = RegisteredClient(
                clientID: "c1", registrationAccessToken: RegistrationSecret("rat"), registrationClientURI: stub.url("/register/c1"),
                registrationEndpoint: stub.url("/register"))
            await #expect(throws: AuthError.self) { _ = try await registration.update(client, to: metadata) }
        }
        #expect(stub.requests(to: "/register").isEmpty)
        #expect(stub.requests(to: "/register/c1").isEmpty)
        let registered = try await registration.register(ClientMetadata(redirectURIs: [], jwks: .object(["keys": .array([.object(Self.publicEC)])])))
        #expect(registered.clientID == "c1")
    }
}
