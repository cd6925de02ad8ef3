import COpenSSL
import CredentialVault
import Foundation

/// Reads a private JWK (RFC 7517, RFC 7518 section 6, RFC 8037) into an OpenSSL key:
/// EC P-256 (`d`, `x`, `y`), RSA (`n`, `e`, `d`, `p`, `q`, `dp`, `dq`, `qi`) or OKP Ed25519
/// (`d`, `x`). The private values pass through byte arrays that are wiped, and BIGNUMs flagged
/// secure (cleared when freed); the parsed JSON's strings cannot be wiped, which is why PEM in
/// guarded memory is the better way to hand over a key.
enum PrivateJWK {
    /// The key and the JWK's `kid`, if any. The caller owns (frees) the key.
    static func key(from bytes: SecureBytes) throws(JOSEError) -> (OpaquePointer, String?) {
        var json = bytes.withUnsafeBytes { Data($0) }
        defer { json.resetBytes(in: 0..<json.count) }
        guard case .object(let members)? = try? JSONValue.parse(json, maximumDepth: 4) else {
            throw .invalidKey("the private JWK is not a JSON object")
        }
        let keyID = members["kid"]?.stringValue
        guard let keyType = members["kty"]?.stringValue else { throw .invalidKey("missing \"kty\"") }
        switch keyType {
        case "EC":
            guard members["crv"]?.stringValue == "P-256" else { throw .invalidKey("unsupported EC curve") }
            return (try ec(members), keyID)
        case "OKP":
            guard members["crv"]?.stringValue == "Ed25519" else { throw .invalidKey("unsupported OKP curve") }
            var seed = try member(members, "d")
            defer { wipe(&seed) }
            guard let key = seed.withUnsafeBytes({ OpenSSLPrivateKeys.ed25519(seed: $0) }) else {
                throw .invalidKey("invalid Ed25519 private key")
            }
            // The JWK's `x` must be the public key of `d`: a mismatch would sign with a key
            // other than the one published.
            if members["x"] != nil {
                let x = try member(members, "x")
                guard OpenSSLPrivateKeys.rawPublicKey(key) == Data(x) else {
                    EVP_PKEY_free(key)
                    throw .invalidKey("the JWK's \"x\" is not the public key of its \"d\"")
                }
            }
            return (key, keyID)
        case "RSA":
            return (try rsa(members), keyID)
        default:
            throw .invalidKey("unsupported key type")
        }
    }

    private static func ec(_ members: [String: JSONValue]) throws(JOSEError) -> OpaquePointer {
        let x = try JSONWebKey.fullLengthCoordinate(Data(member(members, "x")))
        let y = try JSONWebKey.fullLengthCoordinate(Data(member(members, "y")))
        let point = [UInt8(0x04)] + Array(x) + Array(y)
        let d = try secureBignum(members, "d")
        defer { BN_clear_free(d) }
        let key = point.withUnsafeBytes { OpenSSLPrivateKeys.ecP256(d: d, publicPoint: $0) }
        guard let key else { throw .invalidKey("the EC private JWK is not a valid P-256 key pair") }
        return key
    }

    private static func rsa(_ members: [String: JSONValue]) throws(JOSEError) -> OpaquePointer {
        var numbers: [OpaquePointer] = []
        defer { numbers.forEach { BN_clear_free($0) } }
        for name in ["n", "e", "d", "p", "q", "dp", "dq", "qi"] { numbers.append(try secureBignum(members, name)) }
        let key = OpenSSLPrivateKeys.rsa(numbers)
        guard let key else { throw .invalidKey("the RSA private JWK is not a valid key pair") }
        return key
    }

    /// A BIGNUM flagged secure holding the base64url member `name`; the caller clears and frees it.
    private static func secureBignum(_ members: [String: JSONValue], _ name: String) throws(JOSEError) -> OpaquePointer {
        var bytes = try member(members, name)
        defer { wipe(&bytes) }
        guard bytes.count <= 1024, let number = bytes.withUnsafeBytes({ OpenSSLPrivateKeys.secureBignum($0) }) else {
            throw .invalidKey("bad \"\(name)\"")
        }
        return number
    }

    private static func member(_ members: [String: JSONValue], _ name: String) throws(JOSEError) -> [UInt8] {
        guard let text = members[name]?.stringValue else { throw .invalidKey("missing \"\(name)\"") }
        guard var data = try? Base64URL.decode(text) else { throw .invalidKey("\"\(name)\" is not valid base64url") }
        defer { data.resetBytes(in: 0..<data.count) }
        return Array(data)
    }

    private static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBufferPointer { buffer in
            for index in buffer.indices { buffer[index] = 0 }
        }
    }
}
