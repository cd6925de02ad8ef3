import CredentialVault
import CredentialVaultAuth
import CredentialVaultSecretService
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Group 3c: waiting without blocking. Callers of the async API wait (for the sealed file's
/// lock held by another process, on a SIGSTOPped keyring daemon, on a session store whose
/// loads stall) beside a heartbeat on the cooperative pool, then are cancelled: the heartbeat's
/// worst lag while they wait, and the time from the cancellation to the last answer, each next
/// to its floor measured in turn (the same number of tasks asleep, cancelled). The tests assert
/// what happens (the heartbeat beats, cancelled waits end while the wait's cause remains); these
/// are the speeds, with their targets (lag at most 20 ms, cancellation at most 50 ms).
enum WaitsGroup {
    static let title = "Waiting without blocking: heartbeat lag and cancellation latency"
    static let lagTarget = 20_000_000.0
    static let cancelTarget = 50_000_000.0

    static func run(_ options: Options, _ reporter: Reporter, _ workspace: Workspace) async throws {
        reporter.begin(title)
        defer { reporter.end() }
        let plan = plan(options)
        try await fileLockWait(plan, reporter, workspace)
        try await stoppedSecretService(options, plan, reporter)
        try await stalledSessionStore(plan, reporter)
        reporter.note("heartbeat_lag_*: the longest gap between two wake-ups of a task sleeping 1 ms at a time on the cooperative pool, from the waiters' start to their last answer; cancel_*: from cancelling every waiter to the last one's answer (all `cancelled`). *_floor: the same with the waiters asleep in `Task.sleep` instead (the pool's own noise, Swift's own cancellation), run in turn with the measurement; items: the waiters.")
        reporter.note("file_lock_wait: async saves of an open sealed file waiting for its lock, held by another process (flock). secret_service_stopped: async saves of distinct keys on a SIGSTOPped gnome-keyring-daemon (private keyring only). auth_stalled_store: `SessionManager.getSession()` callers whose session read stalls in the store.")
    }

    /// Runs: few in a quick run, a median worth the name otherwise (each run is about 0.1 s).
    private static func plan(_ options: Options) -> Plan {
        var plan = Plan.process(options)
        plan.runs = options.quick ? 3 : max(plan.runs / 2, 1)
        return plan
    }

    /// 64 async saves of a sealed file whose lock another process holds.
    private static func fileLockWait(_ plan: Plan, _ reporter: Reporter, _ workspace: Workspace) async throws {
        let directory = try workspace.directory("waits")
        var configuration = workspace.configuration
        configuration.lockTimeout = .seconds(3600)
        let url = directory.appendingPathComponent("locked.cvault")
        let store = try await SealedFileStore.create(at: url, secret: .keyFile(try workspace.makeKeyFile("waits.key")), configuration: configuration)
        let holder: LockHolder
        do {
            holder = try LockHolder(url.path + ".lock")
        } catch {
            reporter.note("file_lock_wait skipped: \(error)")
            return
        }
        defer { holder.release() }
        let value = Data(repeating: 0x5A, count: 128)
        let samples = try await WaitTimer.measure(plan, count: 64) { index, started in
            started.arrive()
            do throws(CredentialVaultError) {
                try await store.save(value, for: CredentialKey(service: "waits", account: "save-\(index)"), options: .portable)
                return false
            } catch { return error == .cancelled }
        }
        add(reporter, "file_lock_wait", items: 64, samples)
    }

    /// 64 async Secret Service saves on a stopped daemon: only on the private keyring of
    /// `scripts/with-keyring.sh`, whose daemon's PID it gives (never the session's own daemon).
    private static func stoppedSecretService(_ options: Options, _ plan: Plan, _ reporter: Reporter) async throws {
        let environment = ProcessInfo.processInfo.environment
        guard environment["CREDVAULT_TEST_KEYRING"] == "unlocked", let daemon = environment["CREDVAULT_TEST_KEYRING_PID"].flatMap({ pid_t($0) }) else {
            reporter.note("secret_service_stopped skipped: no private keyring (run under scripts/with-keyring.sh)")
            return
        }
        let store = SecretServiceStore(configuration: SecretServiceConfiguration(timeout: .seconds(3600)))
        guard (try? await store.status())?.isLocked == false else {
            reporter.note("secret_service_stopped skipped: the private keyring is locked or not answering")
            return
        }
        let value = Data(repeating: 0x5A, count: 128)
        defer {
            kill(daemon, SIGCONT)
            _ = try? store.deleteAll(service: "bench-waits")
        }
        let samples = try await WaitTimer.measure(
            plan, count: 64,
            prepare: {
                guard kill(daemon, SIGSTOP) == 0 else { throw BenchError("cannot stop gnome-keyring-daemon \(daemon)") }
                return Countdown()
            },
            finish: { kill(daemon, SIGCONT) }
        ) { index, started in
            started.arrive()
            do throws(CredentialVaultError) {
                try await store.save(value, for: CredentialKey(service: "bench-waits", account: "save-\(index)"), options: .default)
                return false
            } catch { return error == .cancelled }
        }
        add(reporter, "secret_service_stopped", items: 64, samples)
    }

    /// 8 `getSession()` callers of one session manager whose store's loads stall.
    private static func stalledSessionStore(_ plan: Plan, _ reporter: Reporter) async throws {
        let store = StallingSessionStore()
        let manager = await SessionManager(
            refresher: UnusedRefresher(), store: store, key: CredentialKey(service: "bench.auth", account: "session"),
            configuration: .init(proactiveRefresh: false), logger: .credentialVaultSilent)
        let expiry = Date().addingTimeInterval(3600)
        try await manager.establish(
            AuthSession(accessToken: "access", refreshToken: "refresh", expiresAt: expiry, user: AuthUser(subject: "bench"), obtainedAt: Date()))
        let samples = try await WaitTimer.measure(
            plan, count: 8,
            prepare: {
                let started = Countdown()
                store.stallLoads(arrivingAt: started)
                return started
            },
            finish: { store.stallLoads(arrivingAt: nil) }
        ) { _, _ in
            // The store arrives at the countdown when the caller's read begins to stall.
            do throws(AuthError) {
                _ = try await manager.getSession()
                return false
            } catch { return error == .cancelled }
        }
        add(reporter, "auth_stalled_store", items: 8, samples)
    }

    private static func add(_ reporter: Reporter, _ name: String, items: Int, _ samples: (floorLag: Sample, floorCancel: Sample, lag: Sample, cancel: Sample)) {
        let idle = Figure(group: title, name: "heartbeat_lag_\(name)_floor", items: items, sample: samples.floorLag)
        var lag = Figure(group: title, name: "heartbeat_lag_\(name)", items: items, sample: samples.lag)
        lag.relate(to: idle)
        lag.checks.append(.atMost("median", lag.sample.median, lagTarget, unit: "ns"))
        let floor = Figure(group: title, name: "cancel_\(name)_floor", items: items, sample: samples.floorCancel)
        var cancel = Figure(group: title, name: "cancel_\(name)", items: items, sample: samples.cancel)
        cancel.relate(to: floor)
        cancel.checks.append(.atMost("median", cancel.sample.median, cancelTarget, unit: "ns"))
        for figure in [lag, idle, cancel, floor] { reporter.add(figure) }
    }
}

/// The session never needs refreshing here (it is valid for an hour): a refresh is an error.
private struct UnusedRefresher: SessionRefresher {
    func refresh(_ session: AuthSession) async throws(AuthError) -> AuthSession {
        throw .invalidResponse("the benchmark's session is never refreshed")
    }
}
