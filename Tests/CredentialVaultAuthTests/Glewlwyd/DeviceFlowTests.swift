import Logging
import CredentialVault
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

extension GlewlwydTests {
    @Suite("device authorization grant", .ownThread)
    struct DeviceFlow {
        @Test("device grant: the user approves the code through glewlwyd; the session is stored")
        func deviceGrant() async throws {
            let provider = try Glewlwyd.require()
            let store = InMemoryStore()
            let client = try await OIDCClient(configuration: provider.configuration(), store: store, logger: .credentialVaultSilent)
            let browser = try await TestBrowser.signIn(provider)
            let prompts = Recorder<DeviceAuthorization>()
            let session = try await client.signInWithDevice { authorization in
                prompts.append(authorization)
                // The user, on another device, enters the code.
                Task { try? await browser.approveDevice(userCode: authorization.userCode, issuer: provider.issuer) }
            }
            let shown = try #require(prompts.all.first)
            #expect(shown.verificationURI.absoluteString.hasSuffix("/device"))
            #expect(!shown.userCode.isEmpty)
            #expect(!shown.description.contains(shown.deviceCode))
            #expect(session.user?.email == "alice@example.com")
            #expect(try await client.sessions.storedSession() == session)
            #expect(try await GlewlwydTests.userinfoStatus(provider, token: session.accessToken) == 200)
        }

        @Test("polling honours the interval and adds 5 s on the provider's real slow_down")
        func slowDown() async throws {
            let provider = try Glewlwyd.require()
            let transport = CountingTransport()
            let client = try await OIDCClient(
                configuration: provider.configuration(), store: InMemoryStore(), transport: transport, logger: .credentialVaultSilent)
            let browser = try await TestBrowser.signIn(provider)
            let authorization = try await client.startDeviceAuthorization()
            #expect(authorization.interval == .seconds(1))
            let waits = Recorder<Duration>()
            // The client's waits return at once, so its polls come sooner than the 1 s interval
            // and glewlwyd answers slow_down (a poll of the first two may come late on a busy
            // machine: then the next ones are early). Once the client has added 5 s, the user
            // approves, and the last wait is real: glewlwyd refuses a poll within its interval.
            let session = try await client.pollDeviceAuthorization(authorization) { wait in
                waits.append(wait)
                if wait > .seconds(1) {
                    try await browser.approveDevice(userCode: authorization.userCode, issuer: provider.issuer)
                    try await Task.sleep(for: .milliseconds(1100))
                } else if waits.count > 20 {
                    throw TestBrowser.Failure(description: "glewlwyd never answered slow_down to 20 polls in a row")
                }
            }
            let all = waits.all
            #expect(all.count >= 2 && all.dropLast().allSatisfy { $0 == .seconds(1) } && all.last == .seconds(6), "\(all)")
            #expect(transport.tokenRequests(OIDCClient.deviceCodeGrant) == all.count)
            #expect(session.user?.subject.isEmpty == false)
        }

        @Test("a denied or expired device code ends the polling with a clear error")
        func expiredDeviceCode() async throws {
            let provider = try Glewlwyd.require()
            let clock = ManualClock()
            let client = try await OIDCClient(configuration: provider.configuration(), store: InMemoryStore(), clock: clock, logger: .credentialVaultSilent)
            let authorization = try await client.startDeviceAuthorization()
            await #expect(throws: AuthError.authorizationExpired) {
                _ = try await client.pollDeviceAuthorization(authorization) { _ in clock.advance(by: .seconds(601)) }
            }
        }
    }

    @Suite("client credentials", .ownThread)
    struct ClientCredentials {
        @Test("client credentials: the token is cached in the vault until near expiry")
        func cachedToken() async throws {
            let provider = try Glewlwyd.require()
            let vault = try TemporaryVault()
            let transport = CountingTransport()
            let clock = ManualClock()
            let configuration = OIDCConfiguration(
                issuer: provider.issuer, clientID: provider.serviceClientID,
                clientAuthentication: .clientSecretBasic(secret: provider.serviceSecret))
            let client = try ClientCredentialsClient(
                configuration: configuration, scopes: ["api"], store: try vault.open(), transport: transport, clock: clock,
                logger: .credentialVaultSilent)
            let token = try await client.accessToken()
            #expect(try await client.accessToken() == token)
            #expect(transport.tokenRequests("client_credentials") == 1)
            // Another process (a new store object and client) finds it in the vault.
            let other = try ClientCredentialsClient(
                configuration: configuration, scopes: ["api"], store: try vault.open(), transport: transport, clock: clock,
                logger: .credentialVaultSilent)
            #expect(try await other.accessToken() == token)
            #expect(transport.tokenRequests("client_credentials") == 1)
            // Near expiry, a new one is fetched and cached.
            clock.advance(by: .seconds(3550))
            let renewed = try await client.accessToken()
            #expect(renewed != token)
            #expect(transport.tokenRequests("client_credentials") == 2)
            #expect(try await other.accessToken() == renewed)
            // client_secret_post works too.
            let post = try ClientCredentialsClient(
                configuration: OIDCConfiguration(
                    issuer: provider.issuer, clientID: provider.serviceClientID,
                    clientAuthentication: .clientSecretPost(secret: provider.serviceSecret)),
                scopes: ["api"], store: InMemoryStore(), logger: .credentialVaultSilent)
            #expect(try await post.accessToken(forceRefresh: true).isEmpty == false)
        }

        @Test("a wrong client secret is invalidCredentials")
        func wrongSecret() async throws {
            let provider = try Glewlwyd.require()
            let client = try ClientCredentialsClient(
                configuration: OIDCConfiguration(
                    issuer: provider.issuer, clientID: provider.serviceClientID,
                    clientAuthentication: .clientSecretBasic(secret: "wrong")),
                scopes: ["api"], store: InMemoryStore(), logger: .credentialVaultSilent)
            await #expect(throws: AuthError.invalidCredentials) { _ = try await client.accessToken() }
        }

        @Test("concurrent callers share one token request")
        func singleFlight() async throws {
            let provider = try Glewlwyd.require()
            let transport = CountingTransport()
            let client = try ClientCredentialsClient(
                configuration: OIDCConfiguration(
                    issuer: provider.issuer, clientID: provider.serviceClientID,
                    clientAuthentication: .clientSecretBasic(secret: provider.serviceSecret)),
                scopes: ["api"], store: InMemoryStore(), transport: transport, logger: .credentialVaultSilent)
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<50 { group.addTask { try await client.accessToken() } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(tokens.count == 1)
            #expect(transport.tokenRequests("client_credentials") == 1)
        }
    }
}
