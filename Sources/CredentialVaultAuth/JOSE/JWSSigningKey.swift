import COpenSSL
import CredentialVault
import Foundation

/// A private key that signs JWS with ES256 (P-256), RS256 (RSA of 2048 to 8192 bits) or EdDSA
/// (Ed25519): for `private_key_jwt` client assertions, and for DPoP proofs with a per-session
/// P-256 key (`generate(.es256)`).
///
/// The private key lives only inside OpenSSL (an `EVP_PKEY`, freed when this object is, which
/// clears its private values); the PEM or JWK it came from is read from the caller's
/// `SecureBytes` without copies. Nothing here ever prints key material: `description` names
/// the algorithm and key id only.
///
/// Sendable: the `EVP_PKEY` is never modified after `init`, and every signature uses its own
/// OpenSSL contexts, which OpenSSL 3 allows concurrently on one key.
public final class JWSSigningKey: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The algorithm this key signs with (fixed by the key's type).
    public let algorithm: JWSAlgorithm
    /// The `kid` put in signed headers: the one given, the JWK's own, or else the key's RFC 7638
    /// thumbprint, so the public JWK published for it (`publicJWK`) always carries the same.
    public let keyID: String
    /// The public half, checked like any key this library verifies with.
    public let publicKey: JSONWebKey
    /// The public half as JWK members (`kty`, `crv`/`x`/`y` or `n`/`e`, `kid`, `alg`, `use`):
    /// what the provider must be given (a client's `jwks`).
    public let publicJWK: [String: JSONValue]
    /// The RFC 7638 JWK thumbprint (base64url SHA-256 of the required public members).
    public let thumbprint: String

    /// The OpenSSL key (internal for `pkcs8PEM()`; never modified after `init`).
    let key: OpaquePointer

    /// Takes ownership of `key` (freed if this throws).
    private init(owning key: OpaquePointer, keyID: String?) throws(JOSEError) {
        do throws(JOSEError) {
            let (algorithm, members) = try Self.publicMembers(of: key)
            self.algorithm = algorithm
            self.thumbprint = Base64URL.encode(SodiumRuntime.sha256(JSONValue.object(members).serializedData))
            let keyID = keyID ?? thumbprint
            guard !keyID.isEmpty else { throw JOSEError.invalidKey("empty key id") }
            var published = members
            published["kid"] = .string(keyID)
            published["alg"] = .string(algorithm.rawValue)
            published["use"] = .string("sig")
            self.publicKey = try JSONWebKey(members: published)
            self.publicJWK = published
            self.keyID = keyID
            self.key = key
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
    }

    deinit { EVP_PKEY_free(key) }

    /// A key from PEM text (PKCS#8 `PRIVATE KEY`, `EC PRIVATE KEY` or `RSA PRIVATE KEY`;
    /// not encrypted) or from a private JWK (JSON with `d`): whichever `bytes` holds.
    /// - Parameter keyID: the `kid` to sign with; default the JWK's `kid`, else the thumbprint.
    /// - Throws: `JOSEError.invalidKey` for anything else, an encrypted PEM, another curve, an
    ///   RSA key under 2048 bits, or a JWK whose private and public members disagree.
    public convenience init(privateKey bytes: SecureBytes, keyID: String? = nil) throws(JOSEError) {
        let isJSON = bytes.withUnsafeBytes { raw in raw.first { !$0.isASCIIWhitespace } == UInt8(ascii: "{") }
        if isJSON {
            let (key, jwkKeyID) = try PrivateJWK.key(from: bytes)
            try self.init(owning: key, keyID: keyID ?? jwkKeyID)
        } else {
            let key = try bytes.withUnsafeBytes { (pem) throws(JOSEError) in try PrivateKeyDER.key(fromPEM: pem) }
            try self.init(owning: key, keyID: keyID)
        }
    }

    /// A new random key for `algorithm` (P-256, RSA 2048 or Ed25519), e.g. a DPoP session key.
    public static func generate(_ algorithm: JWSAlgorithm, keyID: String? = nil) throws(JOSEError) -> JWSSigningKey {
        guard let key = OpenSSLPrivateKeys.generate(algorithm) else {
            throw .signingFailed("OpenSSL could not generate a \(algorithm.rawValue) key")
        }
        return try JWSSigningKey(owning: key, keyID: keyID)
    }

    /// The key stored in the vault under `credential` (PEM or private JWK, as for
    /// `init(privateKey:keyID:)`). The stored bytes are copied into guarded memory and wiped.
    /// - Throws: `AuthError.storage` when the store fails, `.invalidConfiguration` when there is
    ///   no such credential or it is not a usable private key.
    public static func load(
        _ credential: CredentialKey, from store: any AsyncTokenStorageAdapter, keyID: String? = nil
    ) async throws(AuthError) -> JWSSigningKey {
        let loaded: Data?
        do { loaded = try await store.load(credential) } catch { throw .storage(error) }
        // `consume`: with `loaded` still alive the wipe below would copy-on-write a fresh
        // buffer and leave the store's one as it was; and no `Array` copy (one more unwiped
        // heap copy) on the way to guarded memory.
        guard var value = consume loaded else {
            throw .invalidConfiguration("no credential \(credential.service) / \(credential.account) holds the client's key")
        }
        let secure = value.withUnsafeBytes { SecureBytes(copying: $0) }
        value.resetBytes(in: 0..<value.count)
        do {
            return try JWSSigningKey(privateKey: secure, keyID: keyID)
        } catch {
            throw .invalidConfiguration("the credential \(credential.service) / \(credential.account): \(error.reason)")
        }
    }

    /// The JWS signature of `signingInput` in JOSE form: `r || s` (64 bytes) for ES256,
    /// the PKCS#1 v1.5 signature for RS256, the 64-byte Ed25519 signature for EdDSA.
    public func sign(_ signingInput: Data) throws(JOSEError) -> Data {
        let signature = OpenSSLPrivateKeys.sign(
            key, digest: algorithm != .edDSA, rsaPKCS1: algorithm == .rs256, message: signingInput)
        guard let signature else { throw .signingFailed("OpenSSL could not sign with the \(algorithm.rawValue) key") }
        guard algorithm == .es256 else { return Data(signature) }
        return Data(try ECDSASignatureEncoding.rawSignature(fromDER: signature, coordinateSize: 32))
    }

    /// The algorithm and public JWK members (without `kid`, `alg`, `use`) of a key this type
    /// accepts; throws for any other key.
    private static func publicMembers(of key: OpaquePointer) throws(JOSEError) -> (JWSAlgorithm, [String: JSONValue]) {
        if EVP_PKEY_is_a(key, "EC") == 1 {
            let group = OpenSSLPrivateKeys.stringParameter(key, OSSL_PKEY_PARAM_GROUP_NAME)
            guard group == "prime256v1" || group == "P-256" else { throw .invalidKey("only P-256 EC keys are supported") }
            guard let x = OpenSSLPrivateKeys.bignumParameter(key, OSSL_PKEY_PARAM_EC_PUB_X, size: 32),
                let y = OpenSSLPrivateKeys.bignumParameter(key, OSSL_PKEY_PARAM_EC_PUB_Y, size: 32)
            else { throw .invalidKey("the EC key has no public point") }
            return (.es256, ["kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode(x)), "y": .string(Base64URL.encode(y))])
        }
        if EVP_PKEY_is_a(key, "RSA") == 1 {
            guard let n = OpenSSLPrivateKeys.bignumParameter(key, OSSL_PKEY_PARAM_RSA_N),
                let e = OpenSSLPrivateKeys.bignumParameter(key, OSSL_PKEY_PARAM_RSA_E)
            else { throw .invalidKey("the RSA key has no public part") }
            // The public JWK's own checks (2048 to 8192 bits, odd exponent) apply from here on.
            return (.rs256, ["kty": "RSA", "n": .string(Base64URL.encode(n)), "e": .string(Base64URL.encode(e))])
        }
        if EVP_PKEY_is_a(key, "ED25519") == 1 {
            guard let x = OpenSSLPrivateKeys.rawPublicKey(key) else { throw .invalidKey("the Ed25519 key has no public key") }
            return (.edDSA, ["kty": "OKP", "crv": "Ed25519", "x": .string(Base64URL.encode(x))])
        }
        throw .invalidKey("unsupported private key type (P-256, RSA or Ed25519)")
    }

    /// The algorithm and key id; never key material.
    public var description: String { "JWSSigningKey(\(algorithm.rawValue), kid: \(keyID), private key redacted)" }

    /// Same as `description`.
    public var debugDescription: String { description }
}

extension UInt8 {
    /// JSON's and PEM's insignificant whitespace: space, tab, CR, LF.
    fileprivate var isASCIIWhitespace: Bool { self == 0x20 || self == 0x09 || self == 0x0A || self == 0x0D }
}
