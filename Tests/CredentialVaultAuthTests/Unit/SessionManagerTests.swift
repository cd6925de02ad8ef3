import Logging
import CredentialVault
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultAuth

/// A scripted provider for the session manager: each refresh pops the next outcome (success
/// when the script is empty) and answers with tokens obtained now (on `clock`) that live
/// exactly `lifetime`.
final class ScriptedRefresher: SessionRefresher {
    private let script: Mutex<[Result<Void, AuthError>]>
    private let calls = Mutex(0)
    private let revocations = Mutex(0)
    private let lifetime: TimeInterval
    private let clock: any CredentialClock

    init(_ outcomes: [Result<Void, AuthError>], lifetime: TimeInterval = 3600, clock: any CredentialClock = SystemClock()) {
        script = Mutex(outcomes)
        self.lifetime = lifetime
        self.clock = clock
    }

    var refreshCount: Int { calls.withLock { $0 } }
    var revokeCount: Int { revocations.withLock { $0 } }

    func refresh(_ session: AuthSession) async throws(AuthError) -> AuthSession {
        let n = calls.withLock { $0 += 1; return $0 }
        let next = script.withLock { $0.isEmpty ? .success(()) : $0.removeFirst() }
        try next.get()
        let now = clock.now()
        return AuthSession(
            accessToken: "access-\(n)", refreshToken: "refresh-\(n)", expiresAt: now.addingTimeInterval(lifetime), user: session.user,
            obtainedAt: now)
    }

    func revoke(_ session: AuthSession) async throws(AuthError) { revocations.withLock { $0 += 1 } }
}

@Suite("session manager rules (scripted provider)")
struct SessionManagerTests {
    static let key = CredentialKey(service: "test.auth", account: "session")

    /// Stores alice's session: an hour-long token with `expiresIn` left.
    @discardableResult
    static func seed(
        _ store: any AsyncTokenStorageAdapter, key: CredentialKey = key, expiresIn: TimeInterval = -10, refreshToken: String? = "refresh-0",
        now: Date = Date()
    ) async throws -> AuthSession {
        let expiry = now.addingTimeInterval(expiresIn)
        let session = AuthSession(
            accessToken: "access-0", refreshToken: refreshToken, expiresAt: expiry,
            user: AuthUser(subject: "alice"), obtainedAt: expiry.addingTimeInterval(-3600))
        try await SessionStorage(store: store, key: key, options: .default).save(session)
        return session
    }

    /// A manager with instant retries, on `clock`; `floor` is its `minimumRefreshInterval`.
    /// Without background refresh unless `proactive`.
    static func manager(
        _ refresher: any SessionRefresher, on store: any AsyncTokenStorageAdapter, floor: Duration = .seconds(2),
        clock: any CredentialClock = SystemClock(), proactive: Bool = false
    ) async -> SessionManager {
        let retry = RetryPolicy(maxRetries: 3, initialDelay: .milliseconds(1)) { _ in }
        return await SessionManager(
            refresher: refresher, store: store, key: key,
            configuration: .init(retryPolicy: retry, proactiveRefresh: proactive, minimumRefreshInterval: floor), clock: clock,
            logger: .credentialVaultSilent)
    }

    /// A manager over alice's session (see `seed`), on `clock`.
    static func manager(
        _ refresher: any SessionRefresher, store: any AsyncTokenStorageAdapter, expiresIn: TimeInterval = -10,
        refreshToken: String? = "refresh-0", clock: any CredentialClock = SystemClock()
    ) async throws -> SessionManager {
        try await seed(store, expiresIn: expiresIn, refreshToken: refreshToken, now: clock.now())
        return await manager(refresher, on: store, clock: clock)
    }

    @Test("only network errors, timeouts, 5xx and 429 are retried, at most 3 times", arguments: [
        (AuthError.networkError("x"), 4), (.timedOut, 4), (.serverUnavailable(status: 500), 4),
        (.rateLimited(retryAfterSeconds: nil), 4), (.providerError(code: "invalid_request", description: nil), 1),
        (.invalidCredentials, 1), (.invalidResponse("x"), 1),
    ])
    func retryClassification(error: AuthError, attempts: Int) async throws {
        let refresher = ScriptedRefresher(Array(repeating: .failure(error), count: 4))
        let store = InMemoryStore()
        let manager = try await Self.manager(refresher, store: store)
        await #expect(throws: error) { _ = try await manager.getSession() }
        #expect(refresher.refreshCount == attempts)
        await #expect(try store.load(Self.key) != nil, "the session is kept")
    }

    @Test("a transient failure followed by success refreshes; the rotated token is stored")
    func recovers() async throws {
        let refresher = ScriptedRefresher([.failure(.serverUnavailable(status: 503)), .failure(.timedOut)])
        let store = InMemoryStore()
        let manager = try await Self.manager(refresher, store: store)
        let session = try await manager.getSession()
        #expect(session.accessToken == "access-3")
        #expect(try await manager.storedSession()?.refreshToken == "refresh-3")
    }

    @Test("only invalid_grant deletes the stored session")
    func invalidGrantDeletes() async throws {
        let refresher = ScriptedRefresher([.failure(.invalidGrant(nil))])
        let store = InMemoryStore()
        let manager = try await Self.manager(refresher, store: store)
        await #expect(throws: AuthError.invalidGrant(nil)) { _ = try await manager.getSession() }
        await #expect(try store.load(Self.key) == nil)
        #expect(manager.state == .unauthenticated(.refreshRefused))
        #expect(refresher.refreshCount == 1)
    }

    @Test("a fresh session is returned without refreshing; within the margin it is refreshed")
    func margin() async throws {
        let refresher = ScriptedRefresher([])
        let store = InMemoryStore()
        let fresh = try await Self.manager(refresher, store: store, expiresIn: 120)
        #expect(try await fresh.getSession().accessToken == "access-0")
        #expect(refresher.refreshCount == 0)
        let near = try await Self.manager(refresher, store: store, expiresIn: 30)
        #expect(try await near.getSession().accessToken == "access-1")
    }

    @Test("an expired session without a refresh token is removed: notSignedIn")
    func noRefreshToken() async throws {
        let store = InMemoryStore()
        let manager = try await Self.manager(ScriptedRefresher([]), store: store, refreshToken: nil)
        await #expect(throws: AuthError.notSignedIn) { _ = try await manager.getSession() }
        await #expect(try store.load(Self.key) == nil)
    }

    @Test("sign-out deletes and revokes; getAccessToken then says notSignedIn")
    func signOut() async throws {
        let refresher = ScriptedRefresher([])
        let store = InMemoryStore()
        let manager = try await Self.manager(refresher, store: store, expiresIn: 3600)
        let removed = try await manager.signOut()
        #expect(removed?.accessToken == "access-0")
        #expect(refresher.revokeCount == 1)
        await #expect(throws: AuthError.notSignedIn) { _ = try await manager.getAccessToken() }
    }

    @Test("backoff doubles from the initial delay, capped, and honours Retry-After up to the cap")
    func backoff() {
        let policy = RetryPolicy(maxRetries: 3, initialDelay: .milliseconds(500), maxDelay: .seconds(8))
        let first = policy.delay(before: 1, after: .timedOut)
        let third = policy.delay(before: 3, after: .timedOut)
        #expect(first >= .milliseconds(500) && first <= .milliseconds(600))
        #expect(third >= .seconds(2) && third <= .milliseconds(2400))
        #expect(policy.delay(before: 10, after: .timedOut) == .seconds(8))
        #expect(policy.delay(before: 1, after: .rateLimited(retryAfterSeconds: 3)) == .seconds(3))
        #expect(policy.delay(before: 1, after: .rateLimited(retryAfterSeconds: 100)) == .seconds(8))
    }
}
