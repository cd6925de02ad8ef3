/// The JWS signature algorithms this library verifies (RFC 7518, RFC 8037).
///
/// Deliberately absent: `none` (unsigned), the HMAC family (`HS*`: a public client cannot
/// hold the secret, and accepting them is the classic key-confusion attack where an RSA
/// public key is used as an HMAC secret), and every other asymmetric algorithm.
public enum JWSAlgorithm: String, Sendable, Hashable, CaseIterable, Codable {
    /// RSASSA-PKCS1-v1_5 with SHA-256; the key's modulus must be at least 2048 bits.
    case rs256 = "RS256"
    /// ECDSA on P-256 with SHA-256; the signature is the 64-byte `r || s`.
    case es256 = "ES256"
    /// EdDSA; only the Ed25519 curve is supported.
    case edDSA = "EdDSA"

    /// The algorithm named exactly (byte for byte) `name`, or `nil`.
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { exactlyEqual($0.rawValue, name) }) else { return nil }
        self = match
    }

    /// The JWK `kty` a key must have to be used with this algorithm.
    public var keyType: String {
        switch self {
        case .rs256: return "RSA"
        case .es256: return "EC"
        case .edDSA: return "OKP"
        }
    }
}
