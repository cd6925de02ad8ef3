import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    /// Everything logged at trace level while authenticating with assertions, accepted and
    /// refused, and every error's text: no assertion, token, secret or key in any of it.
    @Suite("client assertions: nothing secret in logs or errors", .ownThread)
    struct ClientAssertionLogging {
        @Test("trace logs and errors of private_key_jwt and client_secret_jwt hold no assertion, token, secret or key")
        func nothingSecretLogged() async throws {
            let provider = try Glewlwyd.require()
            let directory = try #require(ProcessInfo.processInfo.environment["GLEWLWYD_CLIENT_KEY_DIR"])
            let pem = try String(contentsOfFile: directory + "/client-es256.pem", encoding: .utf8)
            let pemBody = try #require(pem.split(separator: "\n").dropFirst().first.map(String.init))
            let secret = try ClientAssertions.secret("sj-secret")
            let key = try ClientAssertions.key(provider, "client-es256.pem", keyID: "pk-es256")
            let capture = LogCapture()
            var errors: [String] = []
            func client(_ id: String, _ authentication: ClientAuthentication) throws -> ClientCredentialsClient {
                try ClientCredentialsClient(
                    configuration: OIDCConfiguration(issuer: provider.issuer, clientID: id, clientAuthentication: authentication),
                    scopes: ["api"], store: InMemoryStore(), logger: capture.logger(level: .trace))
            }
            _ = try await client("pk-es256", .privateKeyJWT(key: key)).accessToken()
            _ = try await client("sj", .clientSecretJWT(secret: secret)).accessToken()
            for refused in [
                try client("pk-es256", .privateKeyJWT(key: key, audience: .issuer)),
                try client("sj", .clientSecretJWT(secret: String(secret.reversed()))),
                try client("pk-es256", .privateKeyJWT(key: try JWSSigningKey.generate(.es256, keyID: "pk-es256"))),
            ] {
                do {
                    _ = try await refused.accessToken()
                    Issue.record("accepted")
                } catch {
                    errors.append("\(error)")
                    errors.append(String(reflecting: error))
                    #expect(error == .invalidCredentials, "\(error)")
                }
            }
            let everything = capture.text + "\n" + errors.joined(separator: "\n")
            #expect(!capture.entries.isEmpty, "the capture saw the requests")
            // Every JWT (assertion, access token) starts with the base64url of `{"`.
            #expect(!everything.contains("eyJ"), "a JWT was logged: \(everything)")
            #expect(!everything.contains(secret))
            #expect(!everything.contains(pemBody))
        }
    }
}
