import CredentialVault
import Foundation

/// How the client authenticates at the token, revocation and device endpoints.
///
/// Not `Hashable`: a private key has no meaningful equality. `description` names the method
/// (and the key's algorithm and id), never a secret or key material.
public enum ClientAuthentication: Sendable, CustomStringConvertible {
    /// A public client (a desktop or CLI app): only `client_id` is sent. PKCE protects the code.
    case none
    /// A confidential client using HTTP Basic (`client_secret_basic`, the OAuth default).
    case clientSecretBasic(secret: String)
    /// A confidential client sending the secret in the form (`client_secret_post`).
    case clientSecretPost(secret: String)
    /// A confidential client proving the secret with an HS256-signed JWT (`client_secret_jwt`,
    /// RFC 7523): the secret itself never crosses the network.
    case clientSecretJWT(secret: String, audience: ClientAssertionAudience = .requestEndpoint)
    /// A confidential client signing a JWT with its private key (`private_key_jwt`, RFC 7523,
    /// preferred by RFC 9700): the provider holds only the public key.
    case privateKeyJWT(key: JWSSigningKey, audience: ClientAssertionAudience = .requestEndpoint)

    /// `true` for the confidential variants.
    public var isConfidential: Bool {
        if case .none = self { return false }
        return true
    }

    /// Refuses an HS256 key shorter than the hash: RFC 7518 section 3.2 requires at least 256
    /// bits, and providers built on strict JOSE libraries refuse shorter ones anyway.
    func validate() throws(AuthError) {
        if case .clientSecretJWT(let secret, _) = self, secret.utf8.count < 32 {
            throw .invalidConfiguration(
                "client_secret_jwt needs a secret of at least 32 bytes (HS256, RFC 7518 section 3.2); use client_secret_basic with a shorter one")
        }
    }

    /// Whether the client authenticates with a signed assertion (a single-use credential).
    var usesAssertion: Bool {
        switch self {
        case .clientSecretJWT, .privateKeyJWT: true
        case .none, .clientSecretBasic, .clientSecretPost: false
        }
    }

    /// The method's name; never the secret or key.
    public var description: String {
        switch self {
        case .none: "none"
        case .clientSecretBasic: "client_secret_basic"
        case .clientSecretPost: "client_secret_post"
        case .clientSecretJWT(_, let audience): "client_secret_jwt (aud: \(audience))"
        case .privateKeyJWT(let key, let audience): "private_key_jwt (\(key.algorithm.rawValue), kid \(key.keyID), aud: \(audience))"
        }
    }

    /// Adds the authentication to a form and its headers for a request to `endpoint`; an
    /// assertion is made afresh (new `jti`, `iat` = `now`) for every call.
    /// - Throws: `AuthError.invalidConfiguration` when the assertion cannot be signed.
    func apply(
        clientID: String, endpoint: URL, metadata: ProviderMetadata, now: Date,
        form: inout [(String, String)], headers: inout [String: String]
    ) throws(AuthError) {
        switch self {
        case .none:
            form.append(("client_id", clientID))
        case .clientSecretBasic(let secret):
            headers["Authorization"] = FormEncoding.basicAuthorization(clientID: clientID, secret: secret)
        case .clientSecretPost(let secret):
            form.append(("client_id", clientID))
            form.append(("client_secret", secret))
        case .clientSecretJWT(let secret, let audience):
            let signer = JWSSigner.hmacSHA256(secret: SecureBytes(copying: Array(secret.utf8)))
            try Self.appendAssertion(clientID: clientID, audience: try audience.value(endpoint: endpoint, metadata: metadata), signer: signer, now: now, form: &form)
        case .privateKeyJWT(let key, let audience):
            try Self.appendAssertion(clientID: clientID, audience: try audience.value(endpoint: endpoint, metadata: metadata), signer: JWSSigner(key: key), now: now, form: &form)
        }
    }

    private static func appendAssertion(
        clientID: String, audience: String, signer: JWSSigner, now: Date, form: inout [(String, String)]
    ) throws(AuthError) {
        let assertion: String
        do { assertion = try ClientAssertion.make(clientID: clientID, audience: audience, signer: signer, now: now) } catch {
            throw .invalidConfiguration("the client assertion cannot be signed: \(error.reason)")
        }
        // client_id is optional with an assertion (RFC 7523 section 3) but harmless, and some
        // providers look the client up by it before reading the assertion.
        form.append(("client_id", clientID))
        form.append(("client_assertion_type", ClientAssertion.type))
        form.append(("client_assertion", assertion))
    }
}
