import Foundation

/// The provider's JWKS, fetched on first use and refetched when a token names an unknown key.
actor KeySetCache {
    private var keySet: JSONWebKeySet?
    private var fetches = 0

    /// How many times the JWKS was fetched (for logs and tests).
    var fetchCount: Int { fetches }

    /// The cached key set, fetched if there is none yet.
    func current(from url: URL, using http: OAuthEndpointClient) async throws(AuthError) -> JSONWebKeySet {
        if let keySet { return keySet }
        return try await refetch(from: url, using: http)
    }

    /// Fetches the key set again and caches it.
    func refetch(from url: URL, using http: OAuthEndpointClient) async throws(AuthError) -> JSONWebKeySet {
        let data = try await http.getJSON(url)
        let parsed: JSONWebKeySet
        do { parsed = try JSONWebKeySet(json: data) } catch {
            throw .invalidResponse("the provider's JWKS is invalid: \(error.reason)")
        }
        for skipped in parsed.skippedKeys {
            http.logger.debug("jwks", "skipped key \(skipped.keyID ?? "without kid"): \(skipped.reason)")
        }
        fetches += 1
        keySet = parsed
        return parsed
    }
}
