import Logging
import CredentialVault
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    /// Transient failures are injected in front of the real provider; what the client does
    /// afterwards (the successful retry, the kept session) happens against glewlwyd.
    @Suite("retries with backoff", .ownThread)
    struct Retries {
        static func client(_ provider: Glewlwyd, _ transport: CountingTransport, waits: Recorder<Duration>) async throws -> OIDCClient {
            let retry = RetryPolicy(maxRetries: 3, initialDelay: .milliseconds(100), maxDelay: .seconds(2)) { waits.append($0) }
            return try await OIDCClient(
                configuration: provider.configuration(retry: retry), store: InMemoryStore(), transport: transport,
                logger: .credentialVaultSilent)
        }

        static func fault(_ outcome: Result<HTTPResponse, AuthError>, times: Int) -> CountingTransport.Fault {
            CountingTransport.Fault(grant: "refresh_token", remaining: times, outcome: outcome)
        }

        @Test("503, 429 (Retry-After) and a network error are retried with growing delays; the 4th attempt succeeds")
        func transientThenSuccess() async throws {
            let provider = try Glewlwyd.require()
            let transport = CountingTransport()
            let waits = Recorder<Duration>()
            let client = try await Self.client(provider, transport, waits: waits)
            let first = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            transport.inject(Self.fault(.success(HTTPResponse(status: 503)), times: 1))
            transport.inject(Self.fault(.success(HTTPResponse(status: 429, headers: ["Retry-After": "1"])), times: 1))
            transport.inject(Self.fault(.failure(.networkError("connection reset")), times: 1))
            let token = try await client.getAccessToken(forceRefresh: true)
            #expect(token != first.accessToken)
            #expect(transport.tokenRequests("refresh_token") == 4)
            let delays = waits.all
            #expect(delays.count == 3)
            #expect(delays[0] >= .milliseconds(100) && delays[0] <= .milliseconds(120))
            #expect(delays[1] == .seconds(1))  // Retry-After
            #expect(delays[2] >= .milliseconds(400) && delays[2] <= .milliseconds(480))
            #expect(try await GlewlwydTests.userinfoStatus(provider, token: token) == 200)
        }

        @Test("after 3 retries the transient error surfaces and the session is kept")
        func exhausted() async throws {
            let provider = try Glewlwyd.require()
            let transport = CountingTransport()
            let waits = Recorder<Duration>()
            let client = try await Self.client(provider, transport, waits: waits)
            let first = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            transport.inject(Self.fault(.success(HTTPResponse(status: 502)), times: 4))
            await #expect(throws: AuthError.serverUnavailable(status: 502)) {
                _ = try await client.getAccessToken(forceRefresh: true)
            }
            #expect(transport.tokenRequests("refresh_token") == 4)
            #expect(waits.count == 3)
            #expect(try await client.sessions.storedSession() == first)
            #expect(client.sessions.state == .authenticated(SessionSummary(first)))
            // The provider is back: the untouched refresh token still works.
            #expect(try await client.getAccessToken(forceRefresh: true) != first.accessToken)
        }

        @Test("a non-transient provider error is not retried and does not delete the session")
        func definiteButNotInvalidGrant() async throws {
            let provider = try Glewlwyd.require()
            let transport = CountingTransport()
            let waits = Recorder<Duration>()
            let client = try await Self.client(provider, transport, waits: waits)
            let first = try await GlewlwydTests.signIn(client, provider, browser: try await TestBrowser.signIn(provider))
            let body = Data(#"{"error":"invalid_request","error_description":"try again"}"#.utf8)
            transport.inject(Self.fault(.success(HTTPResponse(status: 400, body: body)), times: 1))
            await #expect(throws: AuthError.providerError(code: "invalid_request", description: "try again")) {
                _ = try await client.getAccessToken(forceRefresh: true)
            }
            #expect(transport.tokenRequests("refresh_token") == 1)
            #expect(waits.count == 0)
            #expect(try await client.sessions.storedSession() == first)
        }
    }
}
