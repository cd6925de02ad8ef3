import Logging
import CredentialVault
import Foundation

/// Talks to the InsForge auth API: JSON requests under `<base>/api/auth`, `client_type`,
/// bearer tokens, deadlines, and error answers turned into `InsForgeError`. Logs method, path
/// and status only: bodies carry passwords, codes and tokens, queries carry PKCE values.
struct InsForgeAPI: Sendable {
    let configuration: InsForgeConfiguration
    let transport: any HTTPTransport
    let logger: Logger

    /// What the request was for; it decides what a 400 or 401 means.
    enum Purpose: Sendable {
        /// Sign-in with e-mail and password: 401 is `invalidCredentials`.
        case credentials
        /// A code, link token, reset token or OAuth code with its verifier: 401, or a 400 about
        /// that code or token, is `invalidCode`.
        case secret
        /// Anything else.
        case other
    }

    /// `client_type=<desktop|server>`, for the operations that hand out refresh tokens.
    var clientType: [(String, String)] { [("client_type", configuration.clientType.rawValue)] }

    /// Sends a request and returns the answer when it is 2xx; throws the mapped error otherwise.
    func send(
        _ method: String, _ path: String, query: [(String, String)] = [], body: Data? = nil, bearer: String? = nil,
        purpose: Purpose = .other
    ) async throws(InsForgeError) -> HTTPResponse {
        guard let endpoint = URL(string: configuration.backendIdentifier + "/api/auth" + path),
            let url = FormEncoding.url(endpoint, adding: query)
        else {
            throw .invalidInput("cannot build the URL for \(path)")
        }
        var headers = ["Accept": "application/json"]
        if body != nil { headers["Content-Type"] = "application/json" }
        if let bearer { headers["Authorization"] = "Bearer \(bearer)" }
        let request = HTTPRequest(
            method: method, url: url, headers: headers, body: body, timeout: configuration.requestTimeout,
            maximumResponseSize: ResponseLimit.insForge)
        logger.trace("\(request)", metadata: ["category": "http"])
        let response: HTTPResponse
        do { response = try await transport.send(request) } catch {
            logger.debug("\(request) failed: \(error)", metadata: ["category": "http"])
            throw InsForgeError(error)
        }
        logger.trace("\(request) -> \(response.status)", metadata: ["category": "http"])
        guard (200..<300).contains(response.status) else {
            let error = Self.failure(response, purpose: purpose)
            logger.debug("\(request) -> \(error)", metadata: ["category": "http"])
            throw error
        }
        return response
    }

    /// Sends a request and decodes its JSON answer.
    func call<T: Decodable>(
        _ type: T.Type, _ method: String, _ path: String, query: [(String, String)] = [], body: Data? = nil,
        bearer: String? = nil, purpose: Purpose = .other
    ) async throws(InsForgeError) -> T {
        let response = try await send(method, path, query: query, body: body, bearer: bearer, purpose: purpose)
        do { return try OutsideJSON.decode(T.self, from: response.body) } catch {
            throw .auth(.invalidResponse("the answer to \(method) /api/auth\(path) is not the expected JSON"))
        }
    }

    /// A JSON request body.
    static func json(_ value: some Encodable) throws(InsForgeError) -> Data {
        do { return try JSONEncoder().encode(value) } catch { throw .invalidInput("the request body cannot be encoded as JSON") }
    }

    /// Maps an error answer: 429 rate limit, 409 existing e-mail, user not found, 403 e-mail
    /// verification required, then by purpose (wrong credentials, wrong code), else `backend`.
    static func failure(_ response: HTTPResponse, purpose: Purpose) -> InsForgeError {
        let body = InsForgeBackendError(response: response)
        let code = body.error?.uppercased() ?? ""
        let text = (body.message ?? "").lowercased()
        switch response.status {
        case 429:
            let after = ServerNumber.retryAfter(response.headers["retry-after"])
            return .rateLimited(retryAfterSeconds: after, body)
        case 409:
            return .emailAlreadyExists(body)
        case _ where code == "AUTH_USER_NOT_FOUND" || (response.status == 404 && text.contains("user not found")):
            return .userNotFound(body)
        case 403 where text.contains("verification required") || code == "AUTH_EMAIL_NOT_VERIFIED":
            return .emailNotVerified(body)
        case 401 where purpose == .credentials:
            return .invalidCredentials(body)
        case 401 where purpose == .secret:
            return .invalidCode(body)
        case 400 where purpose == .secret && refusesSecret(text):
            return .invalidCode(body)
        default:
            return .backend(body)
        }
    }

    /// Whether a 400's message is about a wrong, expired or used code or token (the backend's
    /// form of the contract's 401), rather than about some other field.
    private static func refusesSecret(_ text: String) -> Bool {
        let subject = ["code", "token", "otp", "pkce", "verifier"].contains { text.contains($0) }
        let verdict = ["invalid", "expired", "failed", "mismatch", "used"].contains { text.contains($0) }
        return subject && verdict
    }
}
