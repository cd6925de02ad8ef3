import Foundation
import Synchronization

@testable import CredentialVaultAuth

/// What a resource server checks of a DPoP proof (RFC 9449 section 4.3 and 7.1), written from
/// the RFC independently of the client's proof code: `typ` `dpop+jwt`, an asymmetric `alg`,
/// the signature by the header's `jwk`, `htm` and `htu` equal to the request's, `iat` within a
/// minute, `jti` never seen before, `ath` the hash of the access token, and the access token's
/// `cnf.jkt` equal to the RFC 7638 thumbprint of the proof's key.
final class DPoPProofValidator: Sendable {
    private let seen = Mutex<Set<String>>([])
    /// The proofs accepted so far (a test counts its requests with it).
    var acceptedCount: Int { seen.withLock { $0.count } }

    /// `nil` when the proof holds; else why not (for the test's failure message and the
    /// `error_description` of the rejection).
    func rejection(proof: String?, method: String, url: String, accessToken: String, claims: [String: JSONValue]) -> String? {
        guard let proof else { return "no DPoP proof" }
        guard let jws = try? JSONWebSignature(compactSerialization: proof) else { return "the proof is not a JWS" }
        guard jws.header.type == "dpop+jwt" else { return "typ is not dpop+jwt" }
        guard let algorithm = jws.header.knownAlgorithm, ["ES256", "RS256", "EdDSA"].contains(jws.header.algorithm) else {
            return "alg is not an asymmetric algorithm"
        }
        guard case .object(let jwkMembers)? = jws.header.parameters["jwk"], let key = try? JSONWebKey(members: jwkMembers) else {
            return "no public jwk in the header"
        }
        guard jwkMembers["d"] == nil else { return "the jwk holds a private key" }
        guard (try? key.verify(signature: jws.signature, signingInput: jws.signingInput, algorithm: algorithm)) != nil else {
            return "the signature does not verify with the header's jwk"
        }
        guard case .object(let proofClaims)? = try? JSONValue.parse(jws.payload) else { return "the claims are not a JSON object" }
        guard proofClaims["htm"]?.stringValue == method else { return "htm is not \(method)" }
        guard proofClaims["htu"]?.stringValue == url else { return "htu is not \(url)" }
        guard let iat = proofClaims["iat"]?.numberValue, abs(iat - Date().timeIntervalSince1970) <= 60 else {
            return "iat is not within a minute of now"
        }
        guard proofClaims["ath"]?.stringValue == Base64URL.encode(SodiumRuntime.sha256(Array(accessToken.utf8))) else {
            return "ath is not the access token's hash"
        }
        guard let thumbprint = Self.thumbprint(jwkMembers),
            claims["cnf"]?.objectValue?["jkt"]?.stringValue == thumbprint
        else { return "the access token's cnf.jkt is not the proof key's thumbprint" }
        guard let jti = proofClaims["jti"]?.stringValue, !jti.isEmpty else { return "no jti" }
        guard seen.withLock({ $0.insert(jti).inserted }) else { return "jti replayed" }
        return nil
    }

    /// RFC 7638: SHA-256 of the required members in lexicographic order, no whitespace.
    static func thumbprint(_ jwk: [String: JSONValue]) -> String? {
        let required: [String]
        switch jwk["kty"]?.stringValue {
        case "EC": required = ["crv", "kty", "x", "y"]
        case "RSA": required = ["e", "kty", "n"]
        case "OKP": required = ["crv", "kty", "x"]
        default: return nil
        }
        var parts: [String] = []
        for name in required {
            guard let value = jwk[name]?.stringValue else { return nil }
            parts.append("\"\(name)\":\"\(value)\"")
        }
        return Base64URL.encode(SodiumRuntime.sha256(Array(("{" + parts.joined(separator: ",") + "}").utf8)))
    }
}
