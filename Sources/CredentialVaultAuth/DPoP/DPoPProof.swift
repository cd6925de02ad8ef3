import Foundation

/// The claims of one DPoP proof (RFC 9449 section 4.2), built apart from the signing so that
/// each rule is visible and testable.
struct DPoPProof: Sendable {
    /// The HTTP method, upper case.
    let method: String
    /// The request URL without query and fragment.
    let target: String
    /// Whole seconds, one second back: providers refuse an `iat` in the future (glewlwyd does
    /// by default), and a server on the same clock may read it coarsely: glibc's `time()`,
    /// which glewlwyd compares with, uses CLOCK_REALTIME_COARSE and lags the precise clock by up
    /// to a few milliseconds, so `floor(now)` just after a second boundary is one second ahead
    /// of the server's `now` (measured: an occasional `invalid_dpop_proof`, "Invalid iat").
    /// A second back is well inside every acceptance window (glewlwyd's is a minute).
    let issuedAt: Double
    /// 128 random bits, fresh for every proof (a replayed `jti` is refused).
    let jti: String
    /// base64url(SHA-256(access token)) at resources; `nil` at the authorization server.
    let accessTokenHash: String?
    /// The server's latest nonce for the URL's origin, if one is known.
    let nonce: String?

    init(method: String, url: URL, now: Date, accessToken: String? = nil, nonce: String? = nil) {
        self.method = method.uppercased()
        self.target = Self.target(of: url)
        self.issuedAt = now.timeIntervalSince1970.rounded(.down) - 1
        self.jti = SecureRandom.token(byteCount: 16)
        self.accessTokenHash = accessToken.map(Self.accessTokenHash)
        self.nonce = nonce
    }

    /// The claims set.
    var claims: [String: JSONValue] {
        var claims: [String: JSONValue] = [
            "htm": .string(method), "htu": .string(target), "iat": .number(issuedAt), "jti": .string(jti),
        ]
        if let accessTokenHash { claims["ath"] = .string(accessTokenHash) }
        if let nonce { claims["nonce"] = .string(nonce) }
        return claims
    }

    /// The proof signed by `key`, with `typ` `dpop+jwt` and the public key in the header.
    func signed(by key: JWSSigningKey) throws(AuthError) -> String {
        do { return try JWSSigner(key: key).sign(claims: claims, type: "dpop+jwt", embedsPublicKey: true) } catch {
            throw .invalidConfiguration("the DPoP key cannot sign: \(error.reason)")
        }
    }

    /// `htu`: the URL without query, fragment and user information (RFC 9449 section 4.2). Everything else is
    /// kept as given, because providers compare it as a string with their endpoint URL
    /// (glewlwyd does, exactly): send the endpoint URL as discovery published it.
    static func target(of url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.query = nil
        components.fragment = nil
        // Nor user information: an HTTP request's URI has none (RFC 9110 section 4.2.4), and a
        // password there would travel inside every proof (and whatever logs them).
        components.user = nil
        components.password = nil
        return components.string ?? url.absoluteString
    }

    /// `ath`: base64url(SHA-256(the access token's ASCII bytes)).
    static func accessTokenHash(_ token: String) -> String { Base64URL.encode(SodiumRuntime.sha256(Array(token.utf8))) }

    /// The origin a nonce belongs to: scheme, host and port (the default port made explicit).
    static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : 0)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
