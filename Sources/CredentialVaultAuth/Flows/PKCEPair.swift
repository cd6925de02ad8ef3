/// A PKCE verifier and its S256 challenge (RFC 7636). `plain` is never used.
struct PKCEPair: Sendable {
    /// 43 characters of base64url (256 random bits), within RFC 7636's 43...128.
    let verifier: String
    /// `BASE64URL(SHA256(verifier))`.
    let challenge: String

    /// A fresh random pair.
    static func generate() -> PKCEPair { PKCEPair(verifier: SecureRandom.token(byteCount: 32)) }

    /// The pair for a given verifier.
    init(verifier: String) {
        self.verifier = verifier
        self.challenge = OAuthBase64.urlEncode(SecureRandom.sha256(verifier))
    }

    /// Always `S256`.
    static let method = "S256"
}
