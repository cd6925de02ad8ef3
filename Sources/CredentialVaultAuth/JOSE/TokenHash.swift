/// The `at_hash` and `c_hash` claims of an ID token (OIDC Core §3.1.3.6, §3.3.2.11): the
/// base64url left half of the hash of the access token or code, with the hash of the token's
/// signing algorithm (SHA-256 for RS256 and ES256; SHA-512 for EdDSA with Ed25519, as the
/// OpenID errata specify).
enum TokenHash {
    /// The claim value for `value` signed with `algorithm`.
    static func claim(for value: String, algorithm: JWSAlgorithm) -> String {
        let digest = algorithm == .edDSA ? SodiumRuntime.sha512(value.utf8) : SodiumRuntime.sha256(value.utf8)
        return Base64URL.encode(digest.prefix(digest.count / 2))
    }

    /// Whether the token's claim `name` (when present) matches `value`; a claim that is not a
    /// string does not match.
    static func verify(_ name: String, of token: VerifiedIDToken, against value: String) -> Bool {
        guard let present = token.claims[name] else { return true }
        guard let text = present.stringValue else { return false }
        return SodiumRuntime.constantTimeEqual(Array(text.utf8), Array(claim(for: value, algorithm: token.algorithm).utf8))
    }
}
