/// Errors of the JOSE layer (base64url, JSON, JWS/JWT parsing, JWK parsing, signatures).
///
/// Every message is built from fixed text and small numbers only: no case ever carries
/// bytes of the token, the payload, a claim value or a signature, so an error can be logged
/// or shown without leaking the credential it was about. `IDTokenValidator` maps these to
/// `IDTokenError`.
public enum JOSEError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A base64url segment is not canonical unpadded base64url (RFC 7515 section 2).
    case invalidBase64URL
    /// A JSON text is not valid (RFC 8259), is too deep, or has duplicate member names.
    case invalidJSON(String)
    /// A compact JWS/JWT is structurally invalid (part count, size, header, claims set).
    case malformedToken(String)
    /// The header's `alg` is not one of the supported/allowed algorithms.
    case unsupportedAlgorithm(String)
    /// A JWK or JWK Set is malformed or describes a key this library refuses (too small,
    /// not on the curve, unsupported curve...).
    case invalidKey(String)
    /// The token names a `kid` that is not in the key set (or names none and the set holds
    /// no usable key): the caller may refetch the JWKS once and retry.
    case unknownKeyID
    /// The selected key cannot be used with the token's algorithm (`kty`, `crv`, `alg`,
    /// `use` or `key_ops` disagree).
    case keyMismatch(String)
    /// The signature does not verify.
    case badSignature
    /// A signing key could not be read or used, or signing failed (the reason never holds key
    /// material).
    case signingFailed(String)

    /// A human-readable reason, free of token material.
    public var reason: String {
        switch self {
        case .invalidBase64URL: return "invalid base64url encoding"
        case .invalidJSON(let why): return "invalid JSON: \(why)"
        case .malformedToken(let why): return "malformed token: \(why)"
        case .unsupportedAlgorithm(let alg): return "unsupported algorithm \(alg)"
        case .invalidKey(let why): return "invalid key: \(why)"
        case .unknownKeyID: return "unknown key id"
        case .keyMismatch(let why): return "key does not match the token: \(why)"
        case .badSignature: return "signature verification failed"
        case .signingFailed(let why): return "signing failed: \(why)"
        }
    }

    /// Same as `reason`.
    public var description: String { reason }
}

/// Names of registered JWS algorithms that may be echoed in error messages. Anything else
/// that came from a token header is reported as "(unrecognised)", so attacker-chosen text
/// never reaches a log line.
enum RegisteredAlgorithmName {
    private static let known: [String] = [
        "HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "ES256", "ES384", "ES512",
        "ES256K", "PS256", "PS384", "PS512", "EdDSA", "Ed25519", "Ed448", "none",
    ]

    /// `name` if it is a registered algorithm name, otherwise a fixed placeholder.
    static func sanitized(_ name: String) -> String {
        // Return our own constant (matched byte for byte), never the caller's string.
        known.first { exactlyEqual($0, name) } ?? "(unrecognised)"
    }
}
