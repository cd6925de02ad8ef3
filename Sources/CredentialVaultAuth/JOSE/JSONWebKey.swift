import Foundation

/// A public signature-verification key from a JWK (RFC 7517, 7518 section 6, RFC 8037).
///
/// Key material is validated once, at parse time, so a key that exists is usable:
/// RSA moduli of 2048 to 8192 bits with a small odd exponent; P-256 points that OpenSSL
/// confirms are on the curve; Ed25519 points that libsodium confirms are valid and not of
/// small order. Private members (`d`, `p`, ...) are ignored and never stored.
public struct JSONWebKey: Sendable, Equatable {
    /// The public key material.
    public enum Material: Sendable, Equatable {
        /// RSA: big-endian modulus and exponent without leading zero bytes.
        case rsa(modulus: Data, exponent: Data)
        /// EC on P-256: the 32-byte big-endian affine coordinates.
        case p256(x: Data, y: Data)
        /// OKP Ed25519: the 32-byte public key.
        case ed25519(Data)
    }

    /// Smallest RSA modulus accepted (NIST SP 800-131A: below 2048 bits is disallowed).
    public static let minimumRSAModulusBits = 2048
    /// Largest RSA modulus accepted; bounds the cost of one verification.
    public static let maximumRSAModulusBits = 8192

    /// The key material.
    public let material: Material
    /// `kid`, if present.
    public let keyID: String?
    /// `use`, if present (`sig` for signature keys).
    public let use: String?
    /// `alg`, if present: the only algorithm this key may be used with.
    public let algorithm: String?
    /// `key_ops`, if present.
    public let keyOperations: [String]?

    /// The JWK `kty` of this key.
    public var keyType: String {
        switch material {
        case .rsa: return "RSA"
        case .p256: return "EC"
        case .ed25519: return "OKP"
        }
    }

    /// Parses one JWK from JSON text.
    public init(json: Data) throws(JOSEError) {
        let parsed: JSONValue
        do {
            parsed = try JSONValue.parse(json, maximumDepth: 8)
        } catch {
            throw .invalidKey("not valid JSON")
        }
        guard case .object(let members) = parsed else { throw .invalidKey("not a JSON object") }
        try self.init(members: members)
    }

    /// Builds a key from the members of a JWK object.
    /// - Throws: `JOSEError.invalidKey` for unsupported `kty`/`crv`, missing or malformed
    ///   members, weak RSA keys or invalid points.
    public init(members: [String: JSONValue]) throws(JOSEError) {
        guard case .string(let keyType)? = members["kty"] else { throw .invalidKey("missing \"kty\"") }
        self.keyID = try Self.optionalString(members, "kid")
        self.use = try Self.optionalString(members, "use")
        self.algorithm = try Self.optionalString(members, "alg")
        switch members["key_ops"] {
        case nil:
            self.keyOperations = nil
        case .array(let operations)?:
            let strings = operations.compactMap(\.stringValue)
            guard strings.count == operations.count else { throw .invalidKey("\"key_ops\" is not an array of strings") }
            self.keyOperations = strings
        default:
            throw .invalidKey("\"key_ops\" is not an array of strings")
        }
        // Identifiers are matched byte for byte (see `exactlyEqual`).
        if exactlyEqual(keyType, "RSA") {
            self.material = try Self.rsaMaterial(members)
        } else if exactlyEqual(keyType, "EC") {
            guard exactlyEqual(try Self.requiredString(members, "crv"), "P-256") else {
                throw .invalidKey("unsupported EC curve")
            }
            // RFC 7518 section 6.2.1.2 wants full-length coordinates, but some providers
            // (glewlwyd among them) drop leading zero bytes, about one key in 128. Left-padding
            // restores the same integer, so accepting 1...32 bytes is safe; more is refused.
            let x = try Self.fullLengthCoordinate(Self.requiredBytes(members, "x"))
            let y = try Self.fullLengthCoordinate(Self.requiredBytes(members, "y"))
            guard ECDSAP256Verifier.isValidPublicKey(x: x, y: y) else { throw .invalidKey("point is not on P-256") }
            self.material = .p256(x: x, y: y)
        } else if exactlyEqual(keyType, "OKP") {
            guard exactlyEqual(try Self.requiredString(members, "crv"), "Ed25519") else {
                throw .invalidKey("unsupported OKP curve")
            }
            let x = try Self.requiredBytes(members, "x")
            guard x.count == 32 else { throw .invalidKey("Ed25519 keys must be 32 bytes") }
            guard Ed25519Verifier.isValidPublicKey(x) else { throw .invalidKey("invalid Ed25519 point") }
            self.material = .ed25519(x)
        } else {
            throw .invalidKey("unsupported key type")
        }
    }

    private static func rsaMaterial(_ members: [String: JSONValue]) throws(JOSEError) -> Material {
        // RFC 7518 forbids leading zero bytes, but some libraries emit them; they do not
        // change the value, so they are dropped before measuring the modulus.
        let modulus = try requiredBytes(members, "n").drop { $0 == 0 }
        let exponent = try requiredBytes(members, "e").drop { $0 == 0 }
        guard let top = modulus.first else { throw .invalidKey("RSA modulus is zero") }
        let bits = (modulus.count - 1) * 8 + (8 - top.leadingZeroBitCount)
        guard bits >= minimumRSAModulusBits else { throw .invalidKey("RSA modulus shorter than 2048 bits") }
        guard bits <= maximumRSAModulusBits else { throw .invalidKey("RSA modulus longer than 8192 bits") }
        guard let last = modulus.last, last & 1 == 1 else { throw .invalidKey("RSA modulus is even") }
        // A large exponent makes each verification expensive; real keys use 65537 (or 3).
        guard (1...8).contains(exponent.count), let low = exponent.last, low & 1 == 1,
            exponent.count > 1 || low >= 3
        else { throw .invalidKey("RSA exponent must be odd, at least 3 and at most 64 bits") }
        return .rsa(modulus: Data(modulus), exponent: Data(exponent))
    }

    /// Why this key cannot verify `algorithm`, or `nil` if it can: the key type must match
    /// the algorithm, and `alg`, `use` and `key_ops`, when present, must allow it.
    public func incompatibility(with algorithm: JWSAlgorithm) -> String? {
        switch (material, algorithm) {
        case (.rsa, .rs256), (.p256, .es256), (.ed25519, .edDSA): break
        default: return "key type \(keyType) cannot be used with \(algorithm.rawValue)"
        }
        if let declared = self.algorithm, !exactlyEqual(declared, algorithm.rawValue) {
            return "key is restricted to another algorithm"
        }
        if let use, !exactlyEqual(use, "sig") { return "key is not for signatures" }
        if let keyOperations, !keyOperations.contains(where: { exactlyEqual($0, "verify") }) {
            return "key_ops does not allow verify"
        }
        return nil
    }

    /// Whether this key may verify `algorithm` (see `incompatibility(with:)`).
    public func isUsable(with algorithm: JWSAlgorithm) -> Bool { incompatibility(with: algorithm) == nil }

    /// Verifies `signature` over `signingInput` with this key.
    /// - Throws: `.keyMismatch` if the key may not be used with `algorithm`;
    ///   `.badSignature` if the signature is wrong, has the wrong length, or the
    ///   cryptographic library fails (failing closed).
    public func verify(signature: Data, signingInput: Data, algorithm: JWSAlgorithm) throws(JOSEError) {
        if let problem = incompatibility(with: algorithm) { throw .keyMismatch(problem) }
        let valid: Bool
        switch material {
        case .rsa(let modulus, let exponent):
            valid = RSAVerifier.verify(modulus: modulus, exponent: exponent, signature: signature, message: signingInput)
        case .p256(let x, let y):
            valid = ECDSAP256Verifier.verify(x: x, y: y, signature: signature, message: signingInput)
        case .ed25519(let publicKey):
            valid = Ed25519Verifier.verify(publicKey: publicKey, signature: signature, message: signingInput)
        }
        guard valid else { throw .badSignature }
    }

    private static func optionalString(_ members: [String: JSONValue], _ name: String) throws(JOSEError) -> String? {
        switch members[name] {
        case nil: return nil
        case .string(let value)?: return value
        default: throw .invalidKey("\"\(name)\" is not a string")
        }
    }

    private static func requiredString(_ members: [String: JSONValue], _ name: String) throws(JOSEError) -> String {
        guard let value = try optionalString(members, name) else { throw .invalidKey("missing \"\(name)\"") }
        return value
    }

    /// A P-256 coordinate left-padded to 32 bytes; throws for an empty or over-long one.
    static func fullLengthCoordinate(_ bytes: Data) throws(JOSEError) -> Data {
        guard (1...32).contains(bytes.count) else { throw .invalidKey("P-256 coordinates are at most 32 bytes") }
        return Data(repeating: 0, count: 32 - bytes.count) + bytes
    }

    private static func requiredBytes(_ members: [String: JSONValue], _ name: String) throws(JOSEError) -> Data {
        let text = try requiredString(members, name)
        do {
            return try Base64URL.decode(text)
        } catch {
            throw .invalidKey("\"\(name)\" is not valid base64url")
        }
    }
}
