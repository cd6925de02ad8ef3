import Logging
import CredentialVault
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

/// JSON nested deeper than the toolchain's decoder can report (513 `[` with nothing after them
/// made it trap: the process died with SIGILL instead of getting an error) in every answer a
/// provider or backend sends and in a stored session value: each is refused with the error the
/// caller gives for any other input that is not its JSON, and the process goes on.
@Suite("Deeply nested JSON from outside", .ownThread)
struct DeeplyNestedJSONTests {
    /// Made on each use: as a static let, LeakSanitizer reported its storage as leaked at the
    /// test process's exit (reachable only through the global's `Data` representation, which
    /// it did not follow), and the sanitizer run failed on a value that lives as long as the
    /// process by design.
    static var nested: Data { Data(String(repeating: "[", count: 513).utf8) }
    static let issuer = "http://127.0.0.1:1/issuer"

    /// Answers every request with `response`.
    struct Answering: HTTPTransport {
        let response: HTTPResponse
        func send(_ request: HTTPRequest) async throws(AuthError) -> HTTPResponse { response }
    }

    static func endpoints(_ status: Int) -> OAuthEndpointClient {
        OAuthEndpointClient(
            transport: Answering(response: HTTPResponse(status: status, body: nested)), timeout: .seconds(30), logger: .credentialVaultSilent,
            bareBadRequestIsInvalidGrant: false)
    }

    static func client(_ status: Int) async throws -> OIDCClient {
        let configuration = OIDCConfiguration(
            issuer: URL(string: issuer)!, clientID: "cli",
            metadata: ProviderMetadata(
                issuer: issuer, authorizationEndpoint: URL(string: "\(issuer)/auth"), tokenEndpoint: URL(string: "\(issuer)/token")!,
                jwksURI: URL(string: "\(issuer)/jwks"), deviceAuthorizationEndpoint: URL(string: "\(issuer)/device")))
        return try await OIDCClient(
            configuration: configuration, store: InMemoryStore(), transport: Answering(response: HTTPResponse(status: status, body: nested)),
            logger: .credentialVaultSilent)
    }

    @Test("a discovery document nested too deeply is not valid provider metadata")
    func discovery() async {
        let issuer = URL(string: Self.issuer)!
        await #expect(throws: AuthError.discoveryFailed("the document at \(Redactor.describe(Discovery.configurationURL(for: issuer))) is not valid provider metadata")) {
            try await Discovery.fetch(issuer: issuer, policy: EndpointPolicy(issuer: issuer, allowsInsecureHTTP: true), using: Self.endpoints(200))
        }
    }

    @Test("a token response nested too deeply is not the expected JSON; an error answer so nested is still an error")
    func tokenResponses() async throws {
        let metadata = ProviderMetadata(
            issuer: Self.issuer, authorizationEndpoint: nil, tokenEndpoint: URL(string: "\(Self.issuer)/token")!, jwksURI: nil)
        await #expect(throws: AuthError.invalidResponse("the token response is not the expected JSON")) {
            _ = try await Self.endpoints(200).token(metadata, grant: "refresh_token", parameters: [("refresh_token", "rt")], clientID: "cli", authentication: .none, now: { Date() })
        }
        await #expect(throws: AuthError.self) {
            _ = try await Self.endpoints(400).token(metadata, grant: "refresh_token", parameters: [("refresh_token", "rt")], clientID: "cli", authentication: .none, now: { Date() })
        }
    }

    @Test("a device authorization response nested too deeply is not the expected JSON")
    func deviceAuthorization() async throws {
        let client = try await Self.client(200)
        await #expect(throws: AuthError.invalidResponse("the device authorization response is not the expected JSON")) {
            _ = try await client.startDeviceAuthorization()
        }
    }

    @Test("an InsForge answer nested too deeply, as a success or as an error, is refused")
    func insForge() async throws {
        for status in [200, 400] {
            let api = InsForgeAPI(
                configuration: InsForgeConfiguration(baseURL: URL(string: "http://127.0.0.1:1")!),
                transport: Answering(response: HTTPResponse(status: status, body: Self.nested)), logger: .credentialVaultSilent)
            do {
                _ = try await api.call(InsForgeUser.self, "GET", "/sessions/current")
                Issue.record("a nested answer with status \(status) was accepted")
            } catch .auth(.invalidResponse(let message)) {
                #expect(status == 200 && message.contains("is not the expected JSON"))
            } catch {
                #expect(status == 400, "status \(status): \(error)")
            }
        }
    }

    @Test("a stored session value nested too deeply is a corrupted session")
    func storedSession() async throws {
        let store = InMemoryStore()
        let key = CredentialKey(service: "nested", account: "session")
        try await store.save(Self.nested, for: key)
        await #expect(throws: AuthError.storage(.corrupted("the stored session \(key) is not readable; sign in again"))) {
            _ = try await SessionStorage(store: store, key: key, options: .default).load()
        }
    }
}
