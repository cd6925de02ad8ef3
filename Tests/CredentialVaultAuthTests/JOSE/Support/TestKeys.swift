import COpenSSL
import CSodium
import CredentialVaultAuth
import Foundation

/// A failure inside the test key helpers.
struct TestKeyError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A signing key for tests. Generated for real (OpenSSL keygen, libsodium keypair); the
/// private key is kept as bytes so the value is plainly Sendable.
struct TestSigningKey: Sendable {
    enum Kind: Sendable { case rsa, p256, ed25519 }

    let kind: Kind
    /// OpenSSL DER private key (RSA, P-256) or libsodium 64-byte secret key (Ed25519).
    let privateKey: [UInt8]
    /// RSA: (n, e); P-256: (x, y); Ed25519: (public key, []).
    let publicA: [UInt8]
    let publicB: [UInt8]

    /// The JWS algorithm this key signs with.
    var algorithm: JWSAlgorithm {
        switch kind {
        case .rsa: return .rs256
        case .p256: return .es256
        case .ed25519: return .edDSA
        }
    }

    static func rsa(bits: Int32 = 2048) throws -> TestSigningKey {
        let key = try OpenSSLTestSupport.generate("RSA") { EVP_PKEY_CTX_set_rsa_keygen_bits($0, bits) }
        defer { EVP_PKEY_free(key) }
        return TestSigningKey(
            kind: .rsa, privateKey: try OpenSSLTestSupport.privateDER(key),
            publicA: try OpenSSLTestSupport.bignumParameter(key, "n", padTo: nil),
            publicB: try OpenSSLTestSupport.bignumParameter(key, "e", padTo: nil))
    }

    static func p256() throws -> TestSigningKey {
        let key = try OpenSSLTestSupport.generate("EC") { EVP_PKEY_CTX_set_group_name($0, "P-256") }
        defer { EVP_PKEY_free(key) }
        return TestSigningKey(
            kind: .p256, privateKey: try OpenSSLTestSupport.privateDER(key),
            publicA: try OpenSSLTestSupport.bignumParameter(key, "qx", padTo: 32),
            publicB: try OpenSSLTestSupport.bignumParameter(key, "qy", padTo: 32))
    }

    static func ed25519() throws -> TestSigningKey {
        guard sodium_init() >= 0 else { throw TestKeyError("sodium_init") }
        var publicKey = [UInt8](repeating: 0, count: Int(crypto_sign_publickeybytes()))
        var secretKey = [UInt8](repeating: 0, count: Int(crypto_sign_secretkeybytes()))
        guard crypto_sign_keypair(&publicKey, &secretKey) == 0 else { throw TestKeyError("crypto_sign_keypair") }
        return TestSigningKey(kind: .ed25519, privateKey: secretKey, publicA: publicKey, publicB: [])
    }

    /// The public JWK members, with optional `kid`, `alg` and `use`.
    func jwk(kid: String?, alg: String? = nil, use: String? = nil, extra: [String: JSONValue] = [:]) -> [String: JSONValue] {
        var members: [String: JSONValue]
        switch kind {
        case .rsa:
            members = ["kty": "RSA", "n": .string(Base64URL.encode(publicA)), "e": .string(Base64URL.encode(publicB))]
        case .p256:
            members = [
                "kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode(publicA)),
                "y": .string(Base64URL.encode(publicB)),
            ]
        case .ed25519:
            members = ["kty": "OKP", "crv": "Ed25519", "x": .string(Base64URL.encode(publicA))]
        }
        if let kid { members["kid"] = .string(kid) }
        if let alg { members["alg"] = .string(alg) }
        if let use { members["use"] = .string(use) }
        members.merge(extra) { _, new in new }
        return members
    }

    /// The parsed public key.
    func publicKey(kid: String?, alg: String? = nil) throws -> JSONWebKey {
        try JSONWebKey(members: jwk(kid: kid, alg: alg))
    }

    /// Signs `message` as this key's JWS algorithm would (raw r||s for ES256).
    func sign(_ message: Data) throws -> Data {
        switch kind {
        case .rsa:
            return Data(try OpenSSLTestSupport.sign(der: privateKey, message: message))
        case .p256:
            let der = try OpenSSLTestSupport.sign(der: privateKey, message: message)
            return Data(try OpenSSLTestSupport.rawECDSA(der: der))
        case .ed25519:
            var signature = [UInt8](repeating: 0, count: Int(crypto_sign_bytes()))
            let bytes = Array(message)
            guard crypto_sign_detached(&signature, nil, bytes, UInt64(bytes.count), privateKey) == 0 else {
                throw TestKeyError("crypto_sign_detached")
            }
            return Data(signature)
        }
    }

    /// The DER ECDSA signature (as OpenSSL produces it), for the "DER instead of raw" test.
    func signDER(_ message: Data) throws -> Data {
        Data(try OpenSSLTestSupport.sign(der: privateKey, message: message))
    }
}
