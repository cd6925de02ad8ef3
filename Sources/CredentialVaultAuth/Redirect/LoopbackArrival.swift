import Foundation

/// The redirect the browser delivered; answer it with `respond(_:)` once the sign-in is done.
public final class LoopbackArrival: Sendable {
    /// The full redirect URL (with `code` and `state`: do not log it).
    public let url: URL
    private let connection: LoopbackConnection

    init(url: URL, connection: LoopbackConnection) {
        self.url = url
        self.connection = connection
    }

    /// Shows the browser a small page and closes the connection (later calls do nothing).
    public func respond(success: Bool, message: String? = nil) {
        respond(success ? .success : .failure(message ?? "unknown error"))
    }

    func respond(_ outcome: LoopbackPage.Outcome) {
        let status = if case .success = outcome { "200 OK" } else { "400 Bad Request" }
        connection.send(status: status, html: LoopbackPage.html(outcome))
    }
}
