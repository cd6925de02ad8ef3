#if ServiceLifecycle
import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing

@testable import CredentialVaultAuth

/// The background refresh as a `Service` in a real `ServiceGroup`, over a sealed-file vault and
/// the stub provider, on virtual time (`BackgroundWaits`): a shutdown, graceful or not, stops
/// the refresh, but one already in flight (its answer held by the test) lands in the vault
/// before the group returns.
@Suite("session refresh service", .ownThread)
struct SessionRefreshServiceTests {
    /// What one test runs: the provider, the vault, a client whose manager's waits are `waits`.
    struct Setup {
        let stub: StubProvider
        let vault: TemporaryVault
        let transport = HeldRefreshTransport()
        let client: OIDCClient
        let waits: BackgroundWaits
        /// Arrives when the manager says it waits for a refresh in flight before stopping.
        let waitingForRefresh: Arrivals

        init(proactive: Bool, passing: Int) async throws {
            let issued = Mutex(0)
            stub = try StubProvider { request in
                guard request.path == "/token", request.form["grant_type"] == "refresh_token" else { return .notFound }
                let n = issued.withLock { $0 += 1; return $0 + 1 }
                return StubOIDC.tokens(access: "at-\(n)", refresh: "rt-\(n)", expiresIn: "3600")
            }
            vault = try TemporaryVault()
            let clock = ManualClock(start: Date(timeIntervalSinceReferenceDate: 800_000_000))
            let waiting = Arrivals()
            waitingForRefresh = waiting
            let logger = Logger(label: "test") { _ in SignalingLogHandler(when: "waiting for the refresh in flight", arrivals: waiting) }
            client = try await OIDCClient(
                configuration: StubOIDC.configuration(stub, session: .init(proactiveRefresh: proactive)), store: try vault.open(),
                transport: transport, clock: clock, logger: logger)
            waits = BackgroundWaits(advancing: clock, passing: passing)
            await waits.install(in: client.sessions)
            try await client.sessions.establish(
                AuthSession(accessToken: "at-1", refreshToken: "rt-1", expiresAt: clock.now().addingTimeInterval(3600), obtainedAt: clock.now()))
        }

        /// The session in the vault, read through a store opened again (as the next process would).
        func storedInVault() async throws -> AuthSession? {
            try await StubOIDC.client(stub, store: try vault.open()).sessions.storedSession()
        }
    }

    @Test("a shutdown during a background refresh returns only once the rotated tokens are stored",
          arguments: [true, false])
    func refreshInFlightIsStored(graceful: Bool) async throws {
        let setup = try await Setup(proactive: false, passing: 1)  // the first wait passes: the session is due
        let ended = Arrivals()
        let (group, running) = startServiceGroup([SessionRefreshService(manager: setup.client.sessions)], ended: ended)
        #expect(await setup.transport.refreshes.reached(1), "the service started the refresh; the provider's answer is held")
        if graceful { await group.triggerGracefulShutdown() } else { running.cancel() }

        // Whichever comes first: the service waiting for the refresh, or the group's end.
        let first = Arrivals()
        Task { if await setup.waitingForRefresh.reached(1) { first.arrive() } }
        Task { if await ended.reached(1) { first.arrive() } }
        #expect(await first.reached(1))
        #expect(ended.count == 0, "the group returned while the refresh was in flight")

        setup.transport.answer.open()
        _ = await running.result
        let stored = try #require(try await setup.storedInVault())
        #expect(stored.accessToken == "at-2")
        #expect(stored.refreshToken == "rt-2", "the rotated refresh token is in the vault")
        #expect(setup.stub.requests(to: "/token").count == 1)
    }

    @Test("a graceful shutdown while the loop waits stops it at once, and nothing starts it again")
    func shutdownWhileWaiting() async throws {
        let setup = try await Setup(proactive: false, passing: 0)  // the service starts the loop: the group runs
        let ended = Arrivals()
        let (group, running) = startServiceGroup([SessionRefreshService(manager: setup.client.sessions)], ended: ended)
        #expect(await setup.waits.began.reached(1), "the loop waits for the refresh margin")
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(await setup.waits.stopped.reached(1), "its wait was cut")
        #expect(setup.waitingForRefresh.count == 0)

        // What a sign-in with proactive refresh calls; after the shutdown it starts nothing.
        await setup.client.sessions.startAutoRefresh()
        #expect(await setup.client.sessions.autoRefresh == nil)
        try await setup.client.sessions.establish(AuthSession(accessToken: "at-new", refreshToken: "rt-new", expiresAt: Date().addingTimeInterval(60)))
        #expect(setup.stub.requests(to: "/token").isEmpty)
        #expect(try await setup.storedInVault()?.refreshToken == "rt-new")
    }
}

/// A swift-log handler that makes `arrivals` arrive at each message containing `text`.
private struct SignalingLogHandler: LogHandler {
    let text: String
    let arrivals: Arrivals
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    init(when text: String, arrivals: Arrivals) {
        self.text = text
        self.arrivals = arrivals
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        if event.message.description.contains(text) { arrivals.arrive() }
    }
}
#endif
