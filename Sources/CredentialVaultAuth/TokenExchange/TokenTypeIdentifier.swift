/// A token type identifier of RFC 8693 section 3: the URI naming what a token is, sent as
/// `subject_token_type`, `actor_token_type` and `requested_token_type`, and answered as
/// `issued_token_type`.
public struct TokenTypeIdentifier: Sendable, Hashable, CustomStringConvertible {
    /// The URI, as sent and compared (exact string equality).
    public let uri: String

    /// An identifier of another profile (a URN or URL the provider documents).
    /// - Throws: `AuthError.invalidConfiguration` for text that cannot be a URI: empty, longer
    ///   than 256 bytes, without a scheme, or with spaces or control characters.
    public init(_ uri: String) throws(AuthError) {
        guard let checked = Self.checked(uri) else {
            throw .invalidConfiguration("a token type identifier must be an absolute URI (RFC 8693 section 3)")
        }
        self.uri = checked
    }

    private init(known uri: String) { self.uri = uri }

    /// The identifier a provider answered (`issued_token_type`), checked as `init` checks.
    static func answered(_ text: String) throws(AuthError) -> TokenTypeIdentifier {
        guard let checked = checked(text) else { throw .invalidResponse("issued_token_type is not a token type URI") }
        return TokenTypeIdentifier(known: checked)
    }

    // The same rule for both directions: printable ASCII without spaces (RFC 3986 characters
    // only, so it travels in a form unchanged), a scheme before the first colon, 256 bytes at
    // most (the registered identifiers are under 60).
    private static func checked(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 256, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
            let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0,
            bytes[0].isASCIILetter
        else { return nil }
        return text
    }

    /// `urn:ietf:params:oauth:token-type:access_token`: an OAuth 2.0 access token.
    public static let accessToken = TokenTypeIdentifier(known: "urn:ietf:params:oauth:token-type:access_token")
    /// `urn:ietf:params:oauth:token-type:refresh_token`: an OAuth 2.0 refresh token.
    public static let refreshToken = TokenTypeIdentifier(known: "urn:ietf:params:oauth:token-type:refresh_token")
    /// `urn:ietf:params:oauth:token-type:id_token`: an OpenID Connect ID token.
    public static let idToken = TokenTypeIdentifier(known: "urn:ietf:params:oauth:token-type:id_token")
    /// `urn:ietf:params:oauth:token-type:jwt`: a JWT of any other use.
    public static let jwt = TokenTypeIdentifier(known: "urn:ietf:params:oauth:token-type:jwt")
    /// `urn:ietf:params:oauth:token-type:saml1`: a base64url-encoded SAML 1.1 assertion.
    public static let saml1 = TokenTypeIdentifier(known: "urn:ietf:params:oauth:token-type:saml1")
    /// `urn:ietf:params:oauth:token-type:saml2`: a base64url-encoded SAML 2.0 assertion.
    public static let saml2 = TokenTypeIdentifier(known: "urn:ietf:params:oauth:token-type:saml2")

    /// The URI.
    public var description: String { uri }
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
}
