import CredentialVault
import Foundation

/// Validates OpenID Connect ID tokens (OIDC Core 1.0 section 3.1.3.7) against a JWKS.
///
/// Order of checks: parse (size, structure, header) -> algorithm allowed -> key selected by
/// `kid` -> signature -> claims. No claim is looked at before the signature verifies, so an
/// attacker learns nothing from which claim check fails on a forged token.
///
/// On `IDTokenError.unknownKeyID` the caller should refetch the JWKS once (the provider may
/// have rotated its keys) and call `validate` again; refetching more than once per token
/// would let forged tokens drive unbounded JWKS traffic.
public struct IDTokenValidator: Sendable {
    /// The default tolerance for clock differences between this machine and the provider.
    public static let defaultClockSkew: Duration = .seconds(60)
    /// The largest tolerance accepted; larger requested values are clamped to it, because a
    /// large skew quietly extends the life of every token.
    public static let maximumClockSkew: Duration = .seconds(600)

    /// The expected `iss`, compared byte for byte.
    public let issuer: String
    /// The client id: must be in `aud`, and equal `azp` when that is present.
    public let clientID: String
    /// The algorithms accepted in the token header.
    public let allowedAlgorithms: Set<JWSAlgorithm>
    /// The effective clock skew, within 0 ... `maximumClockSkew`.
    public let clockSkew: Duration
    /// The source of "now".
    public let clock: any CredentialClock

    /// Creates a validator.
    /// - Parameters:
    ///   - issuer: the issuer identifier from discovery, exactly as the provider writes it.
    ///   - clientID: this client's id.
    ///   - allowedAlgorithms: header algorithms to accept (default: all supported). Pass the
    ///     provider's `id_token_signing_alg_values_supported` intersected with these.
    ///   - clockSkew: tolerance for `exp`, `nbf` and `iat`; clamped to 0 ... 10 minutes.
    ///   - clock: the clock (inject `ManualClock` in tests).
    public init(
        issuer: String, clientID: String, allowedAlgorithms: Set<JWSAlgorithm> = Set(JWSAlgorithm.allCases),
        clockSkew: Duration = defaultClockSkew, clock: any CredentialClock = SystemClock()
    ) {
        self.issuer = issuer
        self.clientID = clientID
        self.allowedAlgorithms = allowedAlgorithms
        self.clockSkew = min(max(clockSkew, .zero), Self.maximumClockSkew)
        self.clock = clock
    }

    /// Parses and validates an ID token.
    /// - Parameters:
    ///   - idToken: the compact serialisation from the token response.
    ///   - keySet: the provider's JWKS.
    ///   - nonce: the nonce sent in the authentication request. When non-nil the token must
    ///     carry an equal `nonce` (compared in constant time). Pass `nil` only where no nonce
    ///     was sent (e.g. an ID token returned by a refresh; OIDC Core section 12.2).
    /// - Returns: the verified claims.
    /// - Throws: `IDTokenError`; its `reason` never contains the token.
    public func validate(_ idToken: String, keySet: JSONWebKeySet, nonce: String?) throws(IDTokenError) -> VerifiedIDToken {
        let token: JSONWebToken
        do {
            token = try JSONWebToken(compactSerialization: idToken)
        } catch {
            throw IDTokenError(error)
        }
        return try validate(token, keySet: keySet, nonce: nonce)
    }

    /// Validates an already parsed token; see `validate(_:keySet:nonce:)`.
    public func validate(_ token: JSONWebToken, keySet: JSONWebKeySet, nonce: String?) throws(IDTokenError) -> VerifiedIDToken {
        // An RFC 9068 access token is also a signed JWT from the same issuer; refuse it
        // explicitly so one can never be accepted as proof of authentication.
        if let type = token.header.type?.lowercased(), type == "at+jwt" || type == "application/at+jwt" {
            throw .malformed("token type is an access token, not an ID token")
        }
        guard let algorithm = token.header.knownAlgorithm, allowedAlgorithms.contains(algorithm) else {
            throw .unsupportedAlgorithm(RegisteredAlgorithmName.sanitized(token.header.algorithm))
        }
        let key: JSONWebKey
        do {
            key = try token.jws.verify(using: keySet, allowedAlgorithms: allowedAlgorithms)
        } catch {
            throw IDTokenError(error)
        }
        let claims = IDTokenClaims(token.claims)

        guard let issuer = try claims.string("iss") else { throw .missingClaim("iss") }
        guard exactlyEqual(issuer, self.issuer) else { throw .issuerMismatch }

        guard let audience = try claims.audience() else { throw .missingClaim("aud") }
        guard audience.contains(where: { exactlyEqual($0, clientID) }) else { throw .audienceMismatch }
        let authorizedParty = try claims.string("azp")
        if let authorizedParty {
            guard exactlyEqual(authorizedParty, clientID) else { throw .authorizedPartyMismatch }
        } else if audience.count > 1 {
            throw .authorizedPartyMismatch
        }

        let now = clock.now()
        let skew = Self.seconds(clockSkew)
        guard let expiresAt = try claims.date("exp") else { throw .missingClaim("exp") }
        // RFC 7519 4.1.4: now must be before exp; the skew extends that by a bounded amount.
        guard now < expiresAt.addingTimeInterval(skew) else { throw .expired }
        if let notBefore = try claims.date("nbf"), notBefore > now.addingTimeInterval(skew) {
            throw .notYetValid
        }
        guard let issuedAt = try claims.date("iat") else { throw .missingClaim("iat") }
        guard issuedAt <= now.addingTimeInterval(skew) else { throw .issuedInFuture }

        let tokenNonce = try claims.string("nonce")
        if let nonce {
            guard let tokenNonce,
                SodiumRuntime.constantTimeEqual(Array(tokenNonce.utf8), Array(nonce.utf8))
            else { throw .nonceMismatch }
        }

        guard let subject = try claims.string("sub") else { throw .missingClaim("sub") }
        guard !subject.isEmpty else { throw .malformed("claim \"sub\" is empty") }

        return VerifiedIDToken(
            subject: subject, issuer: issuer, audience: audience, authorizedParty: authorizedParty,
            expiresAt: expiresAt, issuedAt: issuedAt, authenticatedAt: try claims.date("auth_time"),
            nonce: tokenNonce, algorithm: algorithm, keyID: key.keyID, claims: token.claims)
    }

    /// Validates with the "refetch the JWKS once on an unknown `kid`" policy built in.
    ///
    /// Calls `keySet(false)` for the current (possibly cached) JWKS; only if validation
    /// fails with `.unknownKeyID` does it call `keySet(true)` to refetch, and validates once
    /// more. A token is never the cause of more than one refetch.
    /// - Throws: `IDTokenError`, or whatever `keySet` throws (e.g. a network error).
    public func validate(
        _ idToken: String, nonce: String?, keySet: (_ refresh: Bool) async throws -> JSONWebKeySet
    ) async throws -> VerifiedIDToken {
        do {
            return try validate(idToken, keySet: try await keySet(false), nonce: nonce)
        } catch IDTokenError.unknownKeyID {
            return try validate(idToken, keySet: try await keySet(true), nonce: nonce)
        }
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let parts = duration.components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}
