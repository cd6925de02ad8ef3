import Logging
import CredentialVault
import Foundation

/// One refresh, run under the store's exclusive lock: re-read the stored session, use it if
/// another task or process already refreshed it, otherwise ask the refresher (retrying
/// transient failures), persist the result before returning it, and never write it back after
/// a sign-out.
struct RefreshOperation: Sendable {
    let storage: SessionStorage
    let refresher: any SessionRefresher
    /// The due rule of the session manager.
    let schedule: RefreshSchedule
    /// When the manager's previous successful refresh started.
    let lastRefresh: Date?
    let retry: RetryPolicy
    let clock: any CredentialClock
    let logger: Logger
    let broadcaster: StateBroadcaster
    let epoch: SignOutEpoch
    let startEpoch: Int
    /// The session the caller saw when it decided to refresh.
    let seen: AuthSession
    /// The caller wants a newer access token than `seen`'s even if it has not expired.
    let force: Bool
    /// Where the refreshes that ask the provider are counted and timed.
    let metrics: VaultMetrics
    /// Set for a refresh of one resource's access token (RFC 8707) instead of the main one.
    var resource: ResourceTarget? = nil

    /// A resource whose token is refreshed, and what its stored token must satisfy to be used as it is.
    struct ResourceTarget: Sendable {
        let indicator: String
        let minTTL: Duration
        let margin: Duration

        /// Whether `session` holds a token for this resource that can be handed out at `now`.
        func isServed(by session: AuthSession, at now: Date) -> Bool {
            session.resourceToken(for: indicator)?.lasts(minTTL, margin: margin, at: now) ?? false
        }
    }

    func run() async throws(AuthError) -> AuthSession {
        do {
            return try await storage.exclusively { () async throws(AuthError) -> AuthSession in try await locked() }
        } catch .storage(.busy) {
            // Another process holds the lock beyond the wait: it is probably refreshing. Use its
            // result if it has landed.
            if let latest = try await storage.load(), resource != nil || latest.accessToken != seen.accessToken,
                isServed(by: latest)
            {
                return latest
            }
            throw .storage(.busy)
        }
    }

    /// Whether `session` (another task's or process's result) already gives what this refresh is for.
    private func isServed(by session: AuthSession) -> Bool {
        if let resource { return resource.isServed(by: session, at: clock.now()) }
        return !schedule.isDue(session, now: clock.now(), lastRefresh: lastRefresh)
    }

    private func locked() async throws(AuthError) -> AuthSession {
        guard epoch.current == startEpoch else { throw .notSignedIn }
        guard let current = try await storage.load() else { throw .notSignedIn }
        if let resource {
            // One refresh per resource across processes: whoever held the lock before may have
            // stored this resource's token already.
            if resource.isServed(by: current, at: clock.now()) { return current }
            guard current.refreshToken != nil else {
                throw .unsupported("the session has no refresh token to obtain a token for a resource: sign in again")
            }
            var known = current
            if ResourceChainRules.decide(current.refreshChain, resource: resource.indicator, keepsResources: keepsResources)
                == .learnRotationFirst
            {
                // Learned here, under the same lock as the resource's refresh: a session another
                // process signed in meanwhile is learned too, never spent on a resource unknown.
                logger.info("refreshing the main token first, to learn whether the refresh token rotates", metadata: ["category": "session"])
                known = try await measured(current, for: nil)
            }
            logger.info("refreshing the session for a resource", metadata: ["category": "session"])
            return try await measured(known, for: resource.indicator)
        }
        let now = clock.now()
        // The main token, not the record: a resource's token stored meanwhile is no new main token.
        if current.accessToken != seen.accessToken {
            // Someone refreshed (or signed in) since the caller looked: use theirs if it is good.
            if force || !schedule.isDue(current, now: now, lastRefresh: lastRefresh) {
                logger.debug("using the session another task or process refreshed", metadata: ["category": "session"])
                return current
            }
        } else if !force && !schedule.isDue(current, now: now, lastRefresh: lastRefresh) {
            return current
        }
        guard current.refreshToken != nil else {
            if force { throw .unsupported("the session has no refresh token: sign in again for a new access token") }
            if let expiry = current.expiresAt, expiry <= now {
                try await storage.delete()
                broadcaster.publish(.unauthenticated(.expired))
                throw .notSignedIn
            }
            return current  // still valid for a moment, and nothing can extend it
        }
        // A chain narrowed to a resource cannot extend the main token: it is used while valid.
        if case .refuseNarrowed = ResourceChainRules.decide(current.refreshChain, resource: nil), !force,
            let expiry = current.expiresAt, expiry > now
        {
            return current
        }
        logger.info("refreshing the session\(force ? " (forced)" : "")", metadata: ["category": "session"])
        return try await measured(current, for: nil)
    }

    /// Whether the refresher's provider keeps a rotated refresh token's resources.
    private var keepsResources: Bool { refresher.resourceIndicators == .rotatedTokensKeepResources }

    /// `refreshing(current, for:)`, counted and timed.
    private func measured(_ current: AuthSession, for target: String?) async throws(AuthError) -> AuthSession {
        let started = ContinuousClock.now
        do throws(AuthError) {
            let refreshed = try await refreshing(current, for: target)
            metrics.sessionRefresh(outcome: "success", duration: ContinuousClock.now - started)
            return refreshed
        } catch {
            metrics.sessionRefresh(outcome: error.kind, duration: ContinuousClock.now - started)
            throw error
        }
    }

    /// Asks the refresher for a new session for `current` (for resource indicator `target`, or
    /// the main token) retrying transient failures, and stores it, unless the user signed out
    /// or the stored session changed meanwhile.
    private func refreshing(_ current: AuthSession, for target: String?) async throws(AuthError) -> AuthSession {
        // Decided on the session as stored now, under the lock, before the refresh token is
        // spent. A chain whose rotation is still unknown is never spent on a resource (it was
        // learned just before; unknown still means the store changed under the lock).
        let decision = ResourceChainRules.decide(current.refreshChain, resource: target, keepsResources: keepsResources)
        if let refusal = ResourceChainRules.error(for: decision) { throw refusal }
        if decision == .learnRotationFirst, let target { throw .resourceRefreshWouldNarrow(resource: target) }
        var refreshed: AuthSession
        do {
            refreshed = try await retry.run(onRetry: { attempt, error, wait in
                logger.warning("refresh attempt \(attempt) failed (\(error)); retrying in \(wait)", metadata: ["category": "session"])
            }) { () async throws(AuthError) -> AuthSession in
                if let target { return try await refresher.refresh(current, resource: target) }
                return try await refresher.refresh(current)
            }
        } catch .invalidGrant(let why) {
            // Definite: the refresh token is dead. Delete the session unless it changed meanwhile.
            // A store failure here does not hide the refusal: the dead session left behind is
            // refused again (and deleted) the next time.
            do {
                if let latest = try await storage.load(), latest.refreshToken == current.refreshToken {
                    try await storage.delete()
                }
                logger.warning("the provider rejected the refresh token; the stored session was deleted", metadata: ["category": "session"])
            } catch {
                logger.warning("the provider rejected the refresh token; deleting the session failed: \(error)", metadata: ["category": "session"])
            }
            broadcaster.publish(.unauthenticated(.refreshRefused))
            throw .invalidGrant(why)
        }
        refreshed.refreshChain = ResourceChainRules.after(
            current.refreshChain, resource: target, rotated: Self.rotated(from: current, to: refreshed), keepsResources: keepsResources)
        guard epoch.current == startEpoch else {
            logger.info("signed out during the refresh: its result is discarded", metadata: ["category": "session"])
            await discard(refreshed, keeping: await storedIfReadable())
            throw .notSignedIn
        }
        let latest = try await storage.load()
        guard latest == current else {
            logger.info("the stored session changed during the refresh: its result is discarded", metadata: ["category": "session"])
            await discard(refreshed, keeping: .some(latest))
            guard let latest else { throw .notSignedIn }
            return latest
        }
        try await storage.save(refreshed)  // the rotated refresh token is persisted before anyone sees the new access token
        logger.info("session refreshed", metadata: ["category": "session"])
        return refreshed
    }

    /// Whether `refreshed` holds a refresh token other than the one `current` spent.
    static func rotated(from current: AuthSession, to refreshed: AuthSession) -> Bool {
        guard let new = refreshed.refreshToken else { return false }
        guard let old = current.refreshToken else { return true }
        return !exactlyEqual(old, new)
    }

    /// What is stored (`.some(nil)`: nothing), or `nil` when the store cannot be read.
    private func storedIfReadable() async -> AuthSession?? {
        do { return .some(try await storage.load()) } catch { return nil }
    }

    /// Revokes the tokens of a discarded refresh result, except those that are still stored:
    /// a provider that does not rotate refresh tokens hands back the stored one, and revoking
    /// it would end the session that is kept. `stored` is `nil` when the store could not say
    /// what it holds: then nothing is revoked, since the kept session might be this one.
    private func discard(_ session: AuthSession, keeping stored: AuthSession??) async {
        guard let stored else {
            logger.debug("the discarded session is not revoked: the store could not be read", metadata: ["category": "session"])
            return
        }
        let kept = Set([stored?.accessToken, stored?.refreshToken].compactMap { $0 })
        guard !kept.contains(session.accessToken) else { return }
        var revocable = session
        if let refreshToken = session.refreshToken, kept.contains(refreshToken) { revocable.refreshToken = nil }
        // Resource tokens carried over from the stored session are still in use.
        let keptResources = Set(stored?.resourceTokens.values.map(\.accessToken) ?? [])
        revocable.resourceTokenSet = revocable.resourceTokenSet?.removing { keptResources.contains($0.accessToken) }
        do { try await refresher.revoke(revocable) } catch {
            logger.debug("revoking the discarded session failed: \(error)", metadata: ["category": "session"])
        }
    }
}
