/// Why an ID token was rejected by `IDTokenValidator`.
///
/// Messages (`reason`) are built from fixed text only: never the token, a claim value, the
/// expected nonce or key bytes, so they are safe for logs and for
/// `invalidIDToken(reason)` in the auth client.
public enum IDTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The token is not a well-formed JWS/JWT, or a claim has the wrong JSON type.
    case malformed(String)
    /// The header's `alg` is not implemented or not allowed by the validator.
    case unsupportedAlgorithm(String)
    /// No key in the JWKS has the token's `kid` (or, without a `kid`, no key fits):
    /// refetch the JWKS once and validate again.
    case unknownKeyID
    /// The key named by `kid` cannot verify this algorithm (type, curve, `alg`, `use`,
    /// `key_ops`) or was rejected when the JWKS was parsed (e.g. a weak RSA key).
    case keyMismatch(String)
    /// The signature does not verify.
    case badSignature
    /// A required claim is absent.
    case missingClaim(String)
    /// `iss` is not exactly the expected issuer.
    case issuerMismatch
    /// `aud` does not contain the client id.
    case audienceMismatch
    /// `azp` is not the client id, or is absent while `aud` has several values.
    case authorizedPartyMismatch
    /// `exp` is in the past (beyond the allowed clock skew).
    case expired
    /// `nbf` is in the future (beyond the allowed clock skew).
    case notYetValid
    /// `iat` is in the future (beyond the allowed clock skew).
    case issuedInFuture
    /// `nonce` is absent or differs from the one sent in the authentication request.
    case nonceMismatch

    /// A short human-readable reason, free of token material.
    public var reason: String {
        switch self {
        case .malformed(let why): return "malformed ID token: \(why)"
        case .unsupportedAlgorithm(let alg): return "unsupported or disallowed algorithm \(alg)"
        case .unknownKeyID: return "no key in the JWKS matches the token's key id"
        case .keyMismatch(let why): return "the signing key cannot be used: \(why)"
        case .badSignature: return "signature verification failed"
        case .missingClaim(let name): return "missing claim \"\(name)\""
        case .issuerMismatch: return "issuer does not match"
        case .audienceMismatch: return "audience does not contain the client id"
        case .authorizedPartyMismatch: return "authorized party (azp) does not match the client id"
        case .expired: return "token has expired"
        case .notYetValid: return "token is not yet valid (nbf)"
        case .issuedInFuture: return "token was issued in the future (iat)"
        case .nonceMismatch: return "nonce does not match"
        }
    }

    /// Same as `reason`.
    public var description: String { reason }

    /// Maps a JOSE-layer error (all of which are token-free) onto this enum.
    init(_ error: JOSEError) {
        switch error {
        case .unsupportedAlgorithm(let alg): self = .unsupportedAlgorithm(alg)
        case .unknownKeyID: self = .unknownKeyID
        case .keyMismatch(let why): self = .keyMismatch(why)
        case .invalidKey(let why): self = .keyMismatch(why)
        case .badSignature: self = .badSignature
        case .invalidBase64URL, .invalidJSON, .malformedToken, .signingFailed: self = .malformed(error.reason)
        }
    }
}
