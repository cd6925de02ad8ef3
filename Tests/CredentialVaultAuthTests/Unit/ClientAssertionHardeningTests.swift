import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultAuth

/// Hostile or careless inputs to client assertions: odd client ids, short HMAC secrets, the
/// stored key's bytes, many assertions at once.
@Suite("Client assertions: hostile inputs")
struct ClientAssertionHardeningTests {
    static let metadata = ClientAssertionTests.metadata

    /// A store that hands out its one value in a buffer the test owns, so the test can see
    /// whether the caller wiped the `Data` it was given (as every caller of `load` must).
    final class LendingStore: AsyncTokenStorageAdapter, @unchecked Sendable {
        let buffer: UnsafeMutableRawBufferPointer

        init(_ value: [UInt8]) {
            buffer = .allocate(byteCount: value.count, alignment: 16)
            buffer.copyBytes(from: value)
        }

        deinit { buffer.deallocate() }

        var wiped: Bool { buffer.allSatisfy { $0 == 0 } }

        var capabilities: BackendCapabilities { InMemoryStore().capabilities }
        var defaultService: String { "lending" }
        func save(_ value: Data, for key: CredentialKey, options: StorageOptions) async throws(CredentialVaultError) {}
        func load(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
            Data(bytesNoCopy: buffer.baseAddress!, count: buffer.count, deallocator: .none)
        }
        func take(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? { nil }
        func delete(_ key: CredentialKey) async throws(CredentialVaultError) -> Bool { false }
        func listKeys(service: String?) async throws(CredentialVaultError) -> [CredentialKey] { [] }
        func metadata(for key: CredentialKey) async throws(CredentialVaultError) -> CredentialMetadata? { nil }
        func deleteAll(service: String?) async throws(CredentialVaultError) -> Int { 0 }
    }

    @Test("the key bytes loaded from the store are wiped once the key is read")
    func loadedKeyBytesAreWiped() async throws {
        let pem = """
            -----BEGIN PRIVATE KEY-----
            MC4CAQAwBQYDK2VwBCIEINSzvwL6NUGZn9y33FwyOXUMUsZ4W2VApD5dKJsAcHrN
            -----END PRIVATE KEY-----

            """
        let store = LendingStore(Array(pem.utf8))
        let key = try await JWSSigningKey.load(CredentialKey(service: "k", account: "a"), from: store)
        #expect(key.algorithm == .edDSA)
        #expect(store.wiped, "the PEM the store returned is still readable in the caller's buffer")
    }

    @Test("a client id with quotes, slashes, spaces and non-ASCII is exact in the assertion and in the form")
    func oddClientID() throws {
        let clientID = #"a "b"\c/d+e&f=g é 🙂"#
        let key = try JWSSigningKey.generate(.es256)
        var form: [(String, String)] = []
        var headers: [String: String] = [:]
        try ClientAuthentication.privateKeyJWT(key: key).apply(
            clientID: clientID, endpoint: Self.metadata.tokenEndpoint, metadata: Self.metadata, now: Date(), form: &form, headers: &headers)
        let values = Dictionary(form, uniquingKeysWith: { first, _ in first })
        #expect(values["client_id"] == clientID)
        let claims = try ClientAssertionTests.claims(values)
        #expect(claims["iss"] == .string(clientID))
        #expect(claims["sub"] == .string(clientID))
        // The encoded form decodes back to the same id (no `+` read as a space, no `&` split).
        let body = String(decoding: FormEncoding.body(form), as: UTF8.self)
        let pairs = body.split(separator: "&").map { $0.split(separator: "=", maxSplits: 1).map(String.init) }
        let decoded = pairs.first { $0.first == "client_id" }.flatMap { $0.last?.removingPercentEncoding }
        #expect(decoded == clientID)
    }

    @Test("client_secret_jwt refuses a secret shorter than HS256's 256-bit minimum (RFC 7518 section 3.2)")
    func shortHMACSecretIsRefused() async throws {
        let configuration = OIDCConfiguration(
            issuer: URL(string: "https://idp.example")!, clientID: "svc",
            clientAuthentication: .clientSecretJWT(secret: String(repeating: "k", count: 31)))
        #expect(throws: AuthError.self) { try configuration.validate() }
        var long = configuration
        long.clientAuthentication = .clientSecretJWT(secret: String(repeating: "k", count: 32))
        try long.validate()
    }

    @Test("many assertions signed at once from one key all verify and have distinct jti")
    func concurrentSigning() async throws {
        for algorithm in JWSAlgorithm.allCases {
            let key = try JWSSigningKey.generate(algorithm)
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        try ClientAssertion.make(
                            clientID: "svc", audience: "https://idp.example/token", signer: JWSSigner(key: key), now: Date())
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            var seen = Set<String>()
            for token in tokens {
                let jws = try JSONWebSignature(compactSerialization: token)
                try jws.verify(with: key.publicKey)
                guard case .object(let claims) = try JSONValue.parse(jws.payload), let jti = claims["jti"]?.stringValue else {
                    Issue.record("no jti")
                    continue
                }
                #expect(seen.insert(jti).inserted)
            }
            #expect(seen.count == 200)
        }
    }
}

/// A hostile provider's metadata can name an honest provider's token endpoint as its own and
/// its own server as the revocation (or device) endpoint: an assertion whose `aud` is that
/// token endpoint, sent there, could be replayed at the honest provider by anyone holding it
/// for its minute of validity (the "audience injection" behind draft-ietf-oauth-rfc7523bis).
@Suite("Client assertions: the token-endpoint audience stays at the token endpoint's origin")
struct TokenEndpointAudienceOriginTests {
    static let hostile = ProviderMetadata(
        issuer: "https://evil.example", authorizationEndpoint: nil,
        tokenEndpoint: URL(string: "https://honest.example/oauth/token")!, jwksURI: nil,
        revocationEndpoint: URL(string: "https://evil.example/revoke")!)

    static func apply(_ authentication: ClientAuthentication, to endpoint: URL) throws(AuthError) -> [(String, String)] {
        var form: [(String, String)] = []
        var headers: [String: String] = [:]
        try authentication.apply(clientID: "svc", endpoint: endpoint, metadata: hostile, now: Date(), form: &form, headers: &headers)
        return form
    }

    @Test("an assertion naming the token endpoint is not made for an endpoint on another origin")
    func notSentElsewhere() throws {
        let key = try JWSSigningKey.generate(.es256)
        let revoke = try #require(Self.hostile.revocationEndpoint)
        for authentication in [
            ClientAuthentication.privateKeyJWT(key: key, audience: .tokenEndpoint),
            .clientSecretJWT(secret: String(repeating: "s", count: 32), audience: .tokenEndpoint),
        ] {
            #expect(throws: AuthError.self) { _ = try Self.apply(authentication, to: revoke) }
        }
        // Same origin (another path, an explicit default port, other letter case): allowed.
        let sameOrigin = try Self.apply(.privateKeyJWT(key: key, audience: .tokenEndpoint), to: URL(string: "https://HONEST.example:443/oauth/revoke")!)
        #expect(sameOrigin.contains { $0.0 == "client_assertion" })
        // The other choices bind the audience to where it goes (or to the checked issuer).
        for audience in [ClientAssertionAudience.requestEndpoint, .issuer] {
            #expect(try Self.apply(.privateKeyJWT(key: key, audience: audience), to: revoke).contains { $0.0 == "client_assertion" })
        }
    }
}
