import CredentialVault
import Foundation

/// Produces compact JWS (RFC 7515 section 7.1) over a JSON claims set: client assertions
/// (RFC 7523) now, DPoP proofs (RFC 9449: `typ` `dpop+jwt` and the public key in the header)
/// next, with the same code.
///
/// Asymmetric keys sign with `JWSSigningKey`; `hmacSHA256(secret:)` is for
/// `client_secret_jwt` only, where the client and the provider share the secret (this library
/// never *accepts* HMAC-signed tokens; see `JWSAlgorithm`).
public struct JWSSigner: Sendable {
    private enum Key: Sendable {
        case asymmetric(JWSSigningKey)
        case hmacSHA256(SecureBytes)
    }

    private let key: Key

    /// A signer with `key`, whose algorithm and `kid` go in every header.
    public init(key: JWSSigningKey) { self.key = .asymmetric(key) }

    /// An HS256 signer with a shared secret (`client_secret_jwt`). The secret is held in
    /// guarded memory.
    public static func hmacSHA256(secret: SecureBytes) -> JWSSigner { JWSSigner(key: .hmacSHA256(secret)) }

    private init(key: Key) { self.key = key }

    /// The `alg` header value: `ES256`, `RS256`, `EdDSA` or `HS256`.
    public var algorithmName: String {
        switch key {
        case .asymmetric(let key): key.algorithm.rawValue
        case .hmacSHA256: "HS256"
        }
    }

    /// `claims` signed as a compact JWS.
    /// - Parameters:
    ///   - type: the `typ` header (`dpop+jwt` for DPoP), none by default.
    ///   - embedsPublicKey: put the public JWK in the header (`jwk`, as DPoP requires) instead
    ///     of the `kid`; ignored for HS256, which has no public key.
    /// - Throws: `JOSEError.signingFailed` when the cryptographic library fails.
    public func sign(claims: [String: JSONValue], type: String? = nil, embedsPublicKey: Bool = false) throws(JOSEError) -> String {
        var header: [String: JSONValue] = ["alg": .string(algorithmName)]
        if let type { header["typ"] = .string(type) }
        if case .asymmetric(let key) = key {
            if embedsPublicKey {
                // Only the public members: a `kid`, `alg` or `use` there would be noise.
                header["jwk"] = .object(key.publicJWK.filter { !["kid", "alg", "use"].contains($0.key) })
            } else {
                header["kid"] = .string(key.keyID)
            }
        }
        let signingInput = Base64URL.encode(JSONValue.object(header).serializedData) + "."
            + Base64URL.encode(JSONValue.object(claims).serializedData)
        let message = Data(signingInput.utf8)
        let signature: Data
        switch key {
        case .asymmetric(let key):
            signature = try key.sign(message)
        case .hmacSHA256(let secret):
            guard let mac = secret.withUnsafeBytes({ OpenSSLPrivateKeys.hmacSHA256(secret: $0, message: message) }) else {
                throw .signingFailed("OpenSSL could not compute HMAC-SHA-256")
            }
            signature = Data(mac)
        }
        return signingInput + "." + Base64URL.encode(signature)
    }
}
