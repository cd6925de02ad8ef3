import CredentialVault
import Foundation

/// Resource indicators (RFC 8707): one session, one refresh token, an access token per
/// resource, each obtained and refreshed with `resource=` and stored in the session record.
extension SessionManager {
    /// The longest `minTTL` accepted by `accessToken(for:minTTL:)`: no provider issues access
    /// tokens living longer, and a larger one would only be refused after a request.
    public static let maximumResourceMinTTL: Duration = .seconds(30 * 24 * 3600)

    /// A valid access token for `resource` (its audience, as the provider decides): the one
    /// stored in the session when it is still valid for `minTTL` (and not within the refresh
    /// margin of its expiry), else one from a refresh with `resource=` (one at a time per
    /// resource in this process and, with an `ExclusiveAccessStore`, across processes), stored
    /// in the session record before it is returned. Only a refresh token that does not rotate is
    /// used for resources (`ResourceChainRules`): its rotation is learned from a refresh of the
    /// main token first, and a rotating one is refused before it is spent.
    /// - Throws: `invalidConfiguration` for a resource that is not an absolute http(s) URI
    ///   without fragment, or a `minTTL` beyond `maximumResourceMinTTL`; `invalidTarget` when
    ///   the provider refused the resource (the session is kept); `resourceRefreshWouldNarrow`
    ///   when the provider rotates refresh tokens; `refreshTokenNarrowed` when a rotation in
    ///   another resource's refresh narrowed it; `tokenLifetimeTooShort` when
    ///   a fresh token lives no longer than `minTTL`; `unsupported` without a refresh token;
    ///   otherwise what `getSession()` throws.
    public func accessToken(for resource: URL, minTTL: Duration = .zero) async throws(AuthError) -> String {
        try await resourceCredentials(for: resource, minTTL: minTTL).token.accessToken
    }

    /// The session and its valid token for `resource` (see `accessToken(for:minTTL:)`).
    func resourceCredentials(for resource: URL, minTTL: Duration) async throws(AuthError) -> (session: AuthSession, token: ResourceToken) {
        guard refresher.resourceIndicators != .unsupported else {
            throw .unsupported("this provider does not support resource indicators")
        }
        let indicator = try ResourceURI.indicator(resource)
        guard minTTL <= Self.maximumResourceMinTTL else {
            throw .invalidConfiguration("minTTL is longer than \(Int(Self.maximumResourceMinTTL.secondsValue)) s")
        }
        let target = RefreshOperation.ResourceTarget(
            indicator: indicator, minTTL: max(minTTL, .zero), margin: configuration.refreshMargin)
        let stored = try await requireStored()
        if let token = stored.resourceToken(for: indicator), target.isServed(by: stored, at: clock.now()) {
            return (stored, token)
        }
        // A token obtained within the refresh floor that does not last minTTL: the provider's
        // lifetime is shorter, and asking again would only spend a request (and a rotation).
        if let token = stored.resourceToken(for: indicator), let lifetime = token.lifetime, lifetime <= target.minTTL,
            clock.now().timeIntervalSince(token.obtainedAt) < configuration.minimumRefreshInterval.secondsValue
        {
            throw .tokenLifetimeTooShort(lifetime: lifetime, minTTL: target.minTTL)
        }
        let session = try await refreshResource(target, seen: try chainAllowing(indicator, stored: stored))
        guard let token = session.resourceToken(for: indicator) else { throw .notSignedIn }
        guard target.isServed(by: session, at: clock.now()) else {
            throw .tokenLifetimeTooShort(lifetime: token.lifetime ?? .zero, minTTL: target.minTTL)
        }
        return (session, token)
    }

    /// `stored`, unless `ResourceChainRules` refuse its chain for `indicator` already (then
    /// nothing is sent). A chain whose rotation is unknown is learned by the refresh itself,
    /// under the store's lock.
    private func chainAllowing(_ indicator: String, stored: AuthSession) throws(AuthError) -> AuthSession {
        let decision = ResourceChainRules.decide(
            stored.refreshChain, resource: indicator, keepsResources: refresher.resourceIndicators == .rotatedTokensKeepResources)
        if let refusal = ResourceChainRules.error(for: decision) { throw refusal }
        return stored
    }

    /// The single-flight refresh of one resource's token: callers asking for the same resource
    /// share it; each caller's wait can be cancelled without cancelling it.
    private func refreshResource(_ target: RefreshOperation.ResourceTarget, seen: AuthSession) async throws(AuthError) -> AuthSession {
        try await Self.awaitRefresh(resourceInFlight[target.indicator] ?? startResourceRefresh(target, seen: seen))
    }

    private func startResourceRefresh(_ target: RefreshOperation.ResourceTarget, seen: AuthSession) -> Task<AuthSession, any Error> {
        let startEpoch = epoch.current
        var operation = RefreshOperation(
            storage: storage, refresher: refresher, schedule: schedule, lastRefresh: lastRefresh,
            retry: configuration.retryPolicy, clock: clock, logger: logger, broadcaster: broadcaster,
            epoch: epoch, startEpoch: startEpoch, seen: seen, force: true, metrics: configuration.metrics)
        operation.resource = target
        let task = Task<AuthSession, any Error> {
            let outcome: Result<AuthSession, AuthError>
            do throws(AuthError) { outcome = .success(try await operation.run()) } catch { outcome = .failure(error) }
            resourceRefreshEnded(target.indicator, outcome: outcome)
            return try outcome.get()
        }
        resourceInFlight[target.indicator] = task
        return task
    }

    /// Records the end of a resource refresh: the session it stored (a rotated refresh token)
    /// is the one now known; a refused refresh token was published by the operation.
    private func resourceRefreshEnded(_ indicator: String, outcome: Result<AuthSession, AuthError>) {
        resourceInFlight[indicator] = nil
        if case .success(let session) = outcome, inFlight == nil {
            broadcaster.update { $0.afterReading(session) }
        }
    }
}
