import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultAuth

/// Numbers from the provider (`expires_in`, also quoted, the device `interval` and
/// `expires_in`, `Retry-After`) are range-checked: nonsense is a typed error, huge values are
/// clamped; none can trap (`"expires_in":"1e17"` once killed the process in the background
/// refresh's `Duration` arithmetic).
@Suite("numbers from the provider", .ownThread)
struct ProviderNumberTests {
    /// Signs in with a token of `expiresIn`; with `proactive`, also waits until the background
    /// refresh has computed its first wait from the stored expiry (and began it).
    static func signIn(expiresIn: String, proactive: Bool = false) async throws -> Result<AuthSession, AuthError> {
        let stub = try StubProvider { request in
            request.path == "/token" ? StubOIDC.tokens(expiresIn: expiresIn) : .notFound
        }
        let client = try await StubOIDC.client(stub, session: .init(proactiveRefresh: proactive))
        let waits = BackgroundWaits()
        await waits.install(in: client.sessions)
        do {
            let session = try await StubOIDC.signIn(client)
            if proactive { #expect(await waits.began.reached(1), "the background refresh scheduled its first refresh") }
            await client.sessions.stopAutoRefresh()
            return .success(session)
        } catch let error as AuthError {
            return .failure(error)
        }
    }

    @Test("huge expires_in, as a number or a string, is clamped to a year (and the background refresh survives it)",
          arguments: ["1e17", #""1e17""#, "1e300", #""9223372036854775807""#])
    func hugeLifetime(value: String) async throws {
        let session = try await Self.signIn(expiresIn: value, proactive: true).get()
        let lifetime = try #require(session.expiresAt).timeIntervalSince(session.obtainedAt)
        #expect(abs(lifetime - ServerNumber.maximumLifetime) < 1)
    }

    @Test("fractional, quoted and zero lifetimes are kept", arguments: [("1.5", 1.5), (#""3600""#, 3600), (#"" 90 ""#, 90), ("0", 0)])
    func keptLifetime(value: String, seconds: Double) async throws {
        let session = try await Self.signIn(expiresIn: value, proactive: true).get()
        #expect(abs(try #require(session.expiresAt).timeIntervalSince(session.obtainedAt) - seconds) < 0.01)
    }

    @Test("negative, NaN, infinite and non-numeric expires_in are refused", arguments: [
        ("-5", AuthError.invalidResponse("expires_in is not a valid lifetime")),
        (#""-1e17""#, .invalidResponse("expires_in is not a valid lifetime")),
        (#""nan""#, .invalidResponse("expires_in is not a finite number")),
        (#""inf""#, .invalidResponse("expires_in is not a finite number")),
        (#""soon""#, .invalidResponse("expires_in is not a finite number")),
        ("{}", .invalidResponse("expires_in is not a finite number")),
    ])
    func refusedLifetime(value: String, expected: AuthError) async throws {
        guard case .failure(let error) = try await Self.signIn(expiresIn: value) else {
            Issue.record("expires_in \(value) was accepted")
            return
        }
        #expect(error == expected)
    }

    static func startDevice(_ body: String, clock: any CredentialClock = SystemClock()) async throws -> Result<DeviceAuthorization, AuthError> {
        let stub = try StubProvider { request in request.path == "/device" ? .json(body) : .notFound }
        let client = try await StubOIDC.client(stub, clock: clock)
        do { return .success(try await client.startDeviceAuthorization()) } catch { return .failure(error) }
    }

    static func device(interval: String, expiresIn: String = "600") -> String {
        #"{"device_code":"dc","user_code":"ABCD","verification_uri":"https://idp.example/device","expires_in":\#(expiresIn),"interval":\#(interval)}"#
    }

    @Test("the device interval is clamped to 1 s ... 5 min, its lifetime to an hour", arguments: [
        ("1e300", "600", Duration.seconds(300), 600.0), (#""1e17""#, "1e17", .seconds(300), 3600),
        ("0", "600", .seconds(1), 600), ("2.5", #""900""#, .milliseconds(2500), 900),
    ])
    func deviceClamped(interval: String, expiresIn: String, expected: Duration, lifetime: Double) async throws {
        let clock = ManualClock()
        let authorization = try await Self.startDevice(Self.device(interval: interval, expiresIn: expiresIn), clock: clock).get()
        #expect(authorization.interval == expected)
        #expect(abs(authorization.expiresAt.timeIntervalSince(clock.now()) - lifetime) < 0.001)
    }

    @Test("a negative or NaN device interval, or a lifetime that is not positive, is refused", arguments: [
        (device(interval: "-1"), AuthError.invalidResponse("interval is not a valid interval")),
        (device(interval: #""nan""#), .invalidResponse("interval is not a finite number")),
        (device(interval: "5", expiresIn: "-600"), .invalidResponse("expires_in is not a valid lifetime")),
        (device(interval: "5", expiresIn: "0"), .invalidResponse("the device code expires at once")),
    ])
    func deviceRefused(body: String, expected: AuthError) async throws {
        guard case .failure(let error) = try await Self.startDevice(body) else {
            Issue.record("\(body) was accepted")
            return
        }
        #expect(error == expected)
    }

    @Test("Retry-After is read as delta-seconds and clamped to a day; anything else is ignored", arguments: [
        ("120", 120), ("99999999999999999999999", 86_400), ("000000000003600", 3_600), ("0", 0), ("-5", nil), ("Wed, 21 Oct 2015 07:28:00 GMT", nil), ("1e9", nil),
    ] as [(String, Int?)])
    func retryAfter(header: String, expected: Int?) async throws {
        let stub = try StubProvider { _ in .http(status: 429, headers: ["Retry-After": header], body: Data()) }
        let client = try await StubOIDC.client(stub)
        let request = try await client.beginAuthorization(redirectURI: StubOIDC.redirectURI)
        await #expect(throws: AuthError.rateLimited(retryAfterSeconds: expected)) {
            try await client.handleRedirect(url: URL(string: "\(StubOIDC.redirectURI)?code=c&state=\(request.state)")!)
        }
    }

    /// An InsForge access token's `exp` is clamped like
    /// `expires_in` (0 ... a year from now), so `1e300` neither schedules a refresh in 10^292
    /// years nor breaks the stored session's JSON, and a past `exp` is a token expiring at once.
    @Test("an InsForge access token's exp is clamped like expires_in", arguments: [
        ("1e300", ServerNumber.maximumLifetime), ("-1e300", 0), ("1.7976931348623157e308", ServerNumber.maximumLifetime), ("0", 0),
    ] as [(String, TimeInterval)])
    func insForgeExp(exp: String, lifetime: TimeInterval) throws {
        let jwt = Base64URL.encode(Array(#"{"alg":"HS256"}"#.utf8)) + "." + Base64URL.encode(Array(#"{"exp":\#(exp)}"#.utf8)) + ".c2ln"
        let now = Date()
        let expiry = try #require(InsForgeRefresher.expiry(of: jwt, now: now))
        #expect(expiry.timeIntervalSince(now) == lifetime)
        let session = AuthSession(accessToken: jwt, refreshToken: "r", expiresAt: expiry, obtainedAt: now)
        #expect(try JSONDecoder().decode(AuthSession.self, from: JSONEncoder().encode(session)) == session)
    }

    @Test("an InsForge access token in an hour keeps its exact exp")
    func insForgeExpOrdinary() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let jwt = Base64URL.encode(Array(#"{"alg":"HS256"}"#.utf8)) + "." + Base64URL.encode(Array(#"{"exp":1800003600}"#.utf8)) + ".c2ln"
        #expect(InsForgeRefresher.expiry(of: jwt, now: now) == Date(timeIntervalSince1970: 1_800_003_600))
    }
}
