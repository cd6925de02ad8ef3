import Foundation

/// Proof Key for Code Exchange (RFC 7636), S256 only: `plain` sends the verifier itself in
/// the authorization request and protects nothing against an interceptor.
///
/// The verifier is a secret until the code exchange; `description` redacts it.
public struct PKCE: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The only method this library produces.
    public static let method = "S256"

    /// The `code_verifier`: 43 characters (32 random bytes, base64url), kept until the
    /// token request.
    public let verifier: String
    /// The `code_challenge`: BASE64URL(SHA-256(ASCII(verifier))), sent in the authorization
    /// request with `code_challenge_method=S256`.
    public let challenge: String

    /// A fresh verifier from 32 bytes of libsodium's CSPRNG (256 bits of entropy, the
    /// amount RFC 7636 section 7.1 recommends) and its S256 challenge.
    public static func generate() -> PKCE {
        let verifier = Base64URL.encode(SodiumRuntime.randomBytes(32))
        return PKCE(verifier: verifier, challenge: challenge(for: verifier))
    }

    /// Rebuilds the pair from a stored verifier.
    /// - Returns: `nil` if `verifier` is not 43-128 unreserved characters
    ///   (`A-Z a-z 0-9 - . _ ~`, RFC 7636 section 4.1).
    public init?(verifier: String) {
        guard Self.isValidVerifier(verifier) else { return nil }
        self.init(verifier: verifier, challenge: Self.challenge(for: verifier))
    }

    private init(verifier: String, challenge: String) {
        self.verifier = verifier
        self.challenge = challenge
    }

    /// The S256 challenge for `verifier`.
    public static func challenge(for verifier: String) -> String {
        Base64URL.encode(SodiumRuntime.sha256(verifier.utf8))
    }

    /// Whether `verifier` has the length and alphabet RFC 7636 section 4.1 requires.
    public static func isValidVerifier(_ verifier: String) -> Bool {
        let bytes = Array(verifier.utf8)
        guard (43...128).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                return true
            default:
                return false
            }
        }
    }

    /// Shows the challenge only.
    public var description: String { "PKCE(method: S256, challenge: \(challenge), verifier: <redacted>)" }

    /// Same as `description`.
    public var debugDescription: String { description }
}
