import CredentialVault
import Foundation
import Synchronization
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultAuth

/// The background refresh's schedule, on virtual time (its waits are `BackgroundWaits` that move
/// a `ManualClock` instead of sleeping): a provider whose tokens live no longer than the refresh
/// margin (60 s), or expire at once, never makes it loop without pause; it refreshes at half a
/// token's lifetime, and never more than once per floor (`minimumRefreshInterval`).
@Suite("background refresh schedule", .ownThread)
struct BackgroundRefreshTests {
    /// A provider that answers every token request with a token of `lifetime` seconds and
    /// notes, on `clock`, when each refresh request came.
    static func provider(lifetime: String, clock: (any CredentialClock)? = nil, refreshes: Recorder<Date>? = nil) throws -> StubProvider {
        let issued = Mutex(0)
        return try StubProvider { request in
            guard request.path == "/token" else { return .notFound }
            if request.form["grant_type"] == "refresh_token", let clock { refreshes?.append(clock.now()) }
            let n = issued.withLock { $0 += 1; return $0 }
            return StubOIDC.tokens(access: "at-\(n)", expiresIn: lifetime)
        }
    }

    static func refreshes(_ stub: StubProvider) -> Int {
        stub.requests(to: "/token").filter { $0.form["grant_type"] == "refresh_token" }.count
    }

    /// A virtual clock at a whole second, so that adding half-seconds to it is exact.
    static func clock() -> ManualClock { ManualClock(start: Date(timeIntervalSinceReferenceDate: 800_000_000)) }

    /// Signs in with proactive refresh and lets the background loop run through `waits`
    /// virtual waits; returns once it waits for the next one, stopped.
    static func run(
        _ stub: StubProvider, clock: ManualClock, waits: Int, floor: Duration = .seconds(2)
    ) async throws -> (client: OIDCClient, delays: [Duration]) {
        let background = BackgroundWaits(advancing: clock, passing: waits)
        let client = try await StubOIDC.client(
            stub, session: .init(proactiveRefresh: true, minimumRefreshInterval: floor), clock: clock)
        await background.install(in: client.sessions)
        try await StubOIDC.signIn(client)
        #expect(await background.began.reached(waits + 1), "the loop went through \(waits) waits")
        await client.sessions.stopAutoRefresh()
        return (client, Array(background.delays.all.prefix(waits)))
    }

    @Test("tokens shorter than the margin, or expiring at once: every wait lasts the 2 s floor, one refresh per floor",
          arguments: ["1", "0", "0.001"])
    func floor(lifetime: String) async throws {
        let clock = Self.clock()
        let refreshedAt = Recorder<Date>()
        let stub = try Self.provider(lifetime: lifetime, clock: clock, refreshes: refreshedAt)
        let (_, delays) = try await Self.run(stub, clock: clock, waits: 10)
        #expect(delays.allSatisfy { $0 >= .seconds(2) }, "waits: \(delays)")
        let times = refreshedAt.all
        #expect(times.count == 10, "one refresh per wait: \(times.count)")
        let gaps = zip(times, times.dropFirst()).map { $1.timeIntervalSince($0) }
        #expect(gaps.allSatisfy { $0 >= 2 }, "refreshes closer than the floor: \(gaps)")
    }

    @Test("1-second tokens with a 0.5 s floor: refreshed at half their lifetime, the last one stored")
    func halfLifetime() async throws {
        let clock = Self.clock()
        let stub = try Self.provider(lifetime: "1")
        let (client, delays) = try await Self.run(stub, clock: clock, waits: 10, floor: .milliseconds(500))
        #expect(delays == Array(repeating: .milliseconds(500), count: 10))
        #expect(Self.refreshes(stub) == 10)
        #expect(try await client.sessions.storedSession()?.accessToken == "at-11", "the sign-in's token was at-1")
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
