import Logging
import CredentialVault
import Foundation

/// The provider's JWKS: fetched on first use, kept for a bounded time (the answer's
/// `Cache-Control: max-age` within 1 minute ... 1 day, 1 hour without one), and refetched
/// early for a token that names an unknown key at most once per `unknownKeyCooldown`, so
/// that forged tokens (`OIDCClient.verifyIDToken` is public) cannot drive one fetch each.
actor KeySetCache {
    /// How long a key set is kept without `Cache-Control: max-age`.
    static let defaultLifetime: TimeInterval = 3_600
    /// The bounds a `max-age` is clamped to (`no-store`, `no-cache` give the lower bound).
    static let lifetimeRange: ClosedRange<TimeInterval> = 60...86_400
    /// The shortest time between two refetches caused by an unknown `kid`.
    static let unknownKeyCooldown: TimeInterval = 60

    private let clock: any CredentialClock
    private var keySet: JSONWebKeySet?
    private var expiresAt = Date.distantPast
    private var lastUnknownKeyRefetch: Date?
    private var fetches = 0

    init(clock: any CredentialClock) { self.clock = clock }

    /// How many times the JWKS was fetched (for logs and tests).
    var fetchCount: Int { fetches }

    /// The cached key set, fetched when there is none or it has outlived its lifetime.
    func current(from url: URL, using http: OAuthEndpointClient) async throws(AuthError) -> JSONWebKeySet {
        if let keySet, clock.now() < expiresAt { return keySet }
        return try await fetch(from: url, using: http)
    }

    /// The key set fetched again for a token with an unknown `kid`; `nil` when the last such
    /// refetch was less than `unknownKeyCooldown` ago (the token is then refused).
    func refetchForUnknownKey(from url: URL, using http: OAuthEndpointClient) async throws(AuthError) -> JSONWebKeySet? {
        let now = clock.now()
        if let last = lastUnknownKeyRefetch, now.timeIntervalSince(last) < Self.unknownKeyCooldown, now >= last { return nil }
        lastUnknownKeyRefetch = now  // before the await: concurrent callers share the window
        return try await fetch(from: url, using: http)
    }

    private func fetch(from url: URL, using http: OAuthEndpointClient) async throws(AuthError) -> JSONWebKeySet {
        let response = try await http.getJSONResponse(url, limit: ResponseLimit.jwks)
        let parsed: JSONWebKeySet
        do { parsed = try JSONWebKeySet(json: response.body) } catch {
            throw .invalidResponse("the provider's JWKS is invalid: \(error.reason)")
        }
        for skipped in parsed.skippedKeys {
            http.logger.debug("skipped key \(skipped.keyID ?? "without kid"): \(skipped.reason)", metadata: ["category": "jwks"])
        }
        fetches += 1
        keySet = parsed
        expiresAt = clock.now().addingTimeInterval(Self.lifetime(cacheControl: response.headers["cache-control"]))
        return parsed
    }

    /// The lifetime a `Cache-Control` header asks for, within `lifetimeRange`.
    static func lifetime(cacheControl: String?) -> TimeInterval {
        guard let header = cacheControl?.lowercased() else { return defaultLifetime }
        let directives = header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if directives.contains("no-store") || directives.contains("no-cache") { return lifetimeRange.lowerBound }
        guard let maxAge = directives.first(where: { $0.hasPrefix("max-age=") }).map({ String($0.dropFirst("max-age=".count)) }),
            let seconds = ServerNumber.retryAfter(maxAge)
        else { return defaultLifetime }
        return min(max(TimeInterval(seconds), lifetimeRange.lowerBound), lifetimeRange.upperBound)
    }
}
