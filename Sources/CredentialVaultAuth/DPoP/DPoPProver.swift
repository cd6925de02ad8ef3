import CredentialVault
import Foundation

/// Signs DPoP proofs with one key and sends requests that carry them, answering a nonce
/// challenge with exactly one retry (RFC 9449 sections 8 and 9): a second challenge is the
/// caller's error, never a loop.
struct DPoPProver: Sendable {
    let key: JWSSigningKey
    let nonces: DPoPNonceCache
    let clock: any CredentialClock

    /// A proof for `method` `url` (the nonce cached for its origin, `ath` when `accessToken` is given).
    /// - Parameter target: the URL to name in `htu` when it differs from `url` (a provider quirk).
    func proof(method: String, url: URL, target: URL? = nil, accessToken: String? = nil) async throws(AuthError) -> String {
        let nonce = await nonces.nonce(for: url)
        return try DPoPProof(method: method, url: target ?? url, now: clock.now(), accessToken: accessToken, nonce: nonce)
            .signed(by: key)
    }

    /// Sends with a fresh proof (`send` receives it), learns the answer's nonce, and retries
    /// once with a new proof when the answer is a nonce challenge that carried a new nonce.
    /// The second answer is returned whatever it is.
    func exchange(
        method: String, url: URL, target: URL? = nil, accessToken: String? = nil,
        _ send: (_ proof: String) async throws(AuthError) -> HTTPResponse
    ) async throws(AuthError) -> HTTPResponse {
        var response = try await send(try await proof(method: method, url: url, target: target, accessToken: accessToken))
        await nonces.learn(from: response, for: url)
        guard Self.isNonceChallenge(response), response.headers["dpop-nonce"] != nil else { return response }
        response = try await send(try await proof(method: method, url: url, target: target, accessToken: accessToken))
        await nonces.learn(from: response, for: url)
        return response
    }

    /// `use_dpop_nonce`: a 400 OAuth error body from an authorization server, or a 401 with a
    /// `WWW-Authenticate: DPoP error="use_dpop_nonce"` challenge from a resource.
    static func isNonceChallenge(_ response: HTTPResponse) -> Bool {
        if response.status == 400, OAuthErrorBody.parse(response.body)?.error == "use_dpop_nonce" { return true }
        guard response.status == 401, let challenge = response.headers["www-authenticate"] else { return false }
        return challenge.range(of: #"(^|,|\s)DPoP\s.*error\s*=\s*"?use_dpop_nonce"#, options: [.regularExpression, .caseInsensitive]) != nil
    }

    /// The key stored with a session (PKCS#8 PEM text), ready to sign.
    static func key(stored pem: String) throws(AuthError) -> JWSSigningKey {
        do { return try JWSSigningKey(privateKey: SecureBytes(copying: Array(pem.utf8))) } catch {
            throw .storage(.corrupted("the session's DPoP key is unreadable: sign in again"))
        }
    }

    /// A new P-256 session key and the PEM text it is stored as.
    static func newKey() throws(AuthError) -> (key: JWSSigningKey, pem: String) {
        do {
            let key = try JWSSigningKey.generate(.es256)
            let pem = try key.pkcs8PEM().withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            return (key, pem)
        } catch {
            throw .invalidConfiguration("no DPoP key could be made: \(error.reason)")
        }
    }
}
