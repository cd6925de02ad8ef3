import CredentialVault
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultAuth

/// Finding 3 of issue 12: a provider whose tokens live no longer than the refresh margin
/// (60 s) used to make the background refresh loop without pause (8,191 refreshes in 2 s).
@Suite("background refresh schedule")
struct RefreshStormTests {
    /// A provider that answers every refresh with a token of `lifetime` seconds.
    static func provider(lifetime: String) throws -> StubProvider {
        let issued = Mutex(0)
        return try StubProvider { request in
            guard request.path == "/token" else { return .notFound }
            let n = issued.withLock { $0 += 1; return $0 }
            return StubOIDC.tokens(access: "at-\(n)", expiresIn: lifetime)
        }
    }

    static func refreshes(_ stub: StubProvider) -> Int {
        stub.requests(to: "/token").filter { $0.form["grant_type"] == "refresh_token" }.count
    }

    @Test("tokens shorter than the margin, or expiring at once: at most one refresh per 2 s floor")
    func floor() async throws {
        let stubs = try ["1", "0", "0.001"].map { try Self.provider(lifetime: $0) }
        var clients: [OIDCClient] = []
        for stub in stubs { clients.append(try await StubOIDC.client(stub, session: .init(proactiveRefresh: true))) }
        for client in clients { try await StubOIDC.signIn(client) }
        try await Task.sleep(for: .milliseconds(2500))
        for client in clients { await client.sessions.stopAutoRefresh() }
        for stub in stubs { #expect(Self.refreshes(stub) <= 1) }
    }

    @Test("1-second tokens with a 0.5 s floor: refreshed at half their lifetime, a handful of times in 2 s")
    func halfLifetime() async throws {
        let stub = try Self.provider(lifetime: "1")
        let client = try await StubOIDC.client(stub, session: .init(proactiveRefresh: true, minimumRefreshInterval: .milliseconds(500)))
        try await StubOIDC.signIn(client)
        try await Task.sleep(for: .seconds(2))
        await client.sessions.stopAutoRefresh()
        try await Task.sleep(for: .milliseconds(200))  // a refresh in flight lands
        let count = Self.refreshes(stub)
        #expect(count >= 1 && count <= 5, "\(count) refreshes in 2 s")
        #expect(try await client.sessions.storedSession()?.accessToken == "at-\(count + 1)")
    }

    @Test("the schedule: margin for long tokens, half-life for short ones, backoff, floor, no trap")
    func schedule() {
        let schedule = RefreshSchedule(margin: .seconds(60), floor: .seconds(2))
        let now = Date()
        func session(lifetime: TimeInterval, age: TimeInterval = 0) -> AuthSession {
            AuthSession(accessToken: "a", refreshToken: "r", expiresAt: now.addingTimeInterval(lifetime - age), obtainedAt: now.addingTimeInterval(-age))
        }
        #expect(schedule.delay(for: session(lifetime: 3600), now: now, failures: 0) == .seconds(3540))
        #expect(schedule.delay(for: session(lifetime: 30), now: now, failures: 0) == .seconds(15))
        #expect(schedule.delay(for: session(lifetime: 3), now: now, failures: 0) == .seconds(2))
        #expect(schedule.delay(for: session(lifetime: 0.001), now: now, failures: 0) == .seconds(2))
        #expect(schedule.delay(for: session(lifetime: 3600, age: 3590), now: now, failures: 3) == .seconds(8))
        #expect(schedule.delay(for: session(lifetime: 3600, age: 3590), now: now, failures: 100) == .seconds(60))
        #expect(schedule.delay(for: session(lifetime: 1e300), now: now, failures: 0) == Duration.longest)
        #expect(schedule.delay(for: AuthSession(accessToken: "a"), now: now, failures: 0) == nil)
    }
}
