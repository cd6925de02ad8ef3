import Foundation

/// The step-up of the MCP authorization profile: a resource that answers 403 (or 401) with
/// `error="insufficient_scope"` and a `scope` parameter is asked again after a sign-in for
/// the union of the scopes held and the scopes asked for.
enum ScopeStepUp {
    /// The most scopes a sign-in asks for (a hostile challenge cannot grow the request without bound).
    static let maximumScopeCount = 64

    /// The scopes an `insufficient_scope` challenge of `response` asks for; `nil` when the
    /// response is not such a challenge.
    /// - Throws: `AuthError.invalidResponse` for a malformed or oversized challenge, or a
    ///   scope that is not an RFC 6749 section 3.3 scope token.
    static func requestedScopes(in response: HTTPResponse) throws(AuthError) -> [String]? {
        guard response.status == 401 || response.status == 403 else { return nil }
        let challenges = try AuthenticationChallenge.parse(response)
        guard let challenge = challenges.first(where: { ($0.isScheme("Bearer") || $0.isScheme("DPoP")) && $0.error == "insufficient_scope" })
        else { return nil }
        return try checked(challenge.scopes)
    }

    /// `scopes` a resource names (in a challenge or its metadata), without repeats, checked:
    /// RFC 6749 scope tokens, at most `maximumScopeCount`.
    /// - Throws: `AuthError.invalidResponse` otherwise.
    static func checked(_ scopes: [String]) throws(AuthError) -> [String] {
        for scope in scopes where !isScopeToken(scope) {
            throw .invalidResponse("the resource names a malformed scope")
        }
        return try union([], scopes)
    }

    /// `held` followed by the scopes of `asked` not already in it.
    /// - Throws: `AuthError.invalidResponse` when the union exceeds `maximumScopeCount`.
    static func union(_ held: [String], _ asked: [String]) throws(AuthError) -> [String] {
        var result = held
        for scope in asked where !result.contains(scope) { result.append(scope) }
        guard result.count <= maximumScopeCount else {
            throw .invalidResponse("the resource asks for more than \(maximumScopeCount) scopes")
        }
        return result
    }

    /// scope-token = 1*( %x21 / %x23-5B / %x5D-7E ) (RFC 6749 section 3.3), at most 256 bytes.
    static func isScopeToken(_ scope: String) -> Bool {
        !scope.isEmpty && scope.utf8.count <= 256
            && scope.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }
}
