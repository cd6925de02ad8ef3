import CredentialVault
import Foundation

/// An InsForge error answer (`ErrorResponse`: `error`, `message`, `statusCode`, `nextActions`),
/// as the backend sent it but redacted: the texts pass through `Redactor` and are cut to a
/// few hundred characters, so that neither logs nor error descriptions can carry a secret.
public struct InsForgeBackendError: Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status of the answer.
    public let statusCode: Int
    /// The backend's error code for programs (`AUTH_UNAUTHORIZED`, `INVALID_INPUT`, ...), if any.
    public let error: String?
    /// The backend's human-readable message, if any.
    public let message: String?
    /// What the backend suggests doing about it, if anything.
    public let nextActions: String?

    /// Creates an error answer (the texts are redacted here too).
    public init(statusCode: Int, error: String? = nil, message: String? = nil, nextActions: String? = nil) {
        self.statusCode = statusCode
        self.error = error.map { String($0.prefix(64).filter { $0.isASCII && !$0.isWhitespace }) }.flatMap { $0.isEmpty ? nil : $0 }
        self.message = Redactor.providerText(message, limit: 300)
        self.nextActions = Redactor.providerText(nextActions, limit: 300)
    }

    /// Parses an answer's body; a body that is not an `ErrorResponse` leaves the texts empty.
    init(response: HTTPResponse) {
        struct Body: Decodable {
            var error: String?
            var message: String?
            var nextActions: String?
        }
        let body = response.body.isEmpty ? nil : try? OutsideJSON.decode(Body.self, from: response.body)
        self.init(statusCode: response.status, error: body?.error, message: body?.message, nextActions: body?.nextActions)
    }

    /// `HTTP <status> <error>: <message> (<nextActions>)`, with the parts that are present.
    public var description: String {
        var text = "HTTP \(statusCode)"
        if let error { text += " \(error)" }
        if let message { text += ": \(message)" }
        if let nextActions { text += " (\(nextActions))" }
        return text
    }
}
