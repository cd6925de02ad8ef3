import Foundation

/// Builds the JWT a client authenticates with under `private_key_jwt` and `client_secret_jwt`
/// (RFC 7523 sections 2.2 and 3, OpenID Connect Core section 9): a fresh one per request.
enum ClientAssertion {
    /// The `client_assertion_type` of a JWT assertion.
    static let type = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// How long an assertion is valid: long enough for a slow request and clock skew, short
    /// enough that a captured one is soon useless (providers also refuse a replayed `jti`).
    static let lifetime: TimeInterval = 60

    /// The signed assertion: `iss` = `sub` = the client id, `aud`, a random `jti` (128 bits),
    /// `iat` now and `exp` a minute later, as whole seconds.
    static func make(clientID: String, audience: String, signer: JWSSigner, now: Date) throws(JOSEError) -> String {
        var random = SystemRandomNumberGenerator()
        let jti = Base64URL.encode((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &random) })
        let issuedAt = now.timeIntervalSince1970.rounded(.down)
        return try signer.sign(claims: [
            "iss": .string(clientID), "sub": .string(clientID), "aud": .string(audience), "jti": .string(jti),
            "iat": .number(issuedAt), "exp": .number(issuedAt + lifetime),
        ])
    }
}
