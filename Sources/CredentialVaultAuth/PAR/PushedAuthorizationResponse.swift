import Foundation

/// A PAR endpoint's successful answer (RFC 9126 section 2.2), checked as hostile input before
/// anything uses it: `request_uri` must be a plausible URI (printable ASCII without spaces, at
/// most `maximumRequestURILength` characters: it goes into the browser's URL), `expires_in` a
/// positive number of seconds, clamped to `maximumLifetime` before any date arithmetic.
/// Decoding throws `AuthError.invalidResponse` otherwise.
struct PushedAuthorizationResponse: Decodable, Sendable {
    /// The longest `request_uri` accepted (glewlwyd's are 66 characters).
    static let maximumRequestURILength = 2048
    /// The longest `request_uri` lifetime believed (one hour; RFC 9126 expects 5 to 600 s).
    static let maximumLifetime: TimeInterval = 3_600

    var requestURI: String
    /// Seconds, positive, at most `maximumLifetime`.
    var expiresIn: TimeInterval

    enum CodingKeys: String, CodingKey {
        case requestURI = "request_uri"
        case expiresIn = "expires_in"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let uri = try? container.decode(String.self, forKey: .requestURI) else {
            throw AuthError.invalidResponse("the pushed authorization response has no request_uri string")
        }
        guard Self.isPlausible(uri) else {
            throw AuthError.invalidResponse("the pushed authorization response's request_uri is empty, too long or has characters a URI cannot have")
        }
        requestURI = uri
        guard let lifetime = try ServerNumber.decode(CodingKeys.expiresIn, in: container) else {
            throw AuthError.invalidResponse("the pushed authorization response has no expires_in")
        }
        expiresIn = try ServerNumber.lifetime(lifetime, field: "expires_in", maximum: Self.maximumLifetime)
        guard expiresIn > 0 else { throw AuthError.invalidResponse("the pushed authorization request expires at once (expires_in 0)") }
    }

    /// Non-empty, not too long, visible ASCII only (RFC 3986 has no spaces, controls or
    /// non-ASCII characters in a URI).
    static func isPlausible(_ uri: String) -> Bool {
        !uri.isEmpty && uri.utf8.count <= maximumRequestURILength && uri.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
