import Foundation

@testable import CredentialVaultAuth

/// Passes every request to the real transport and keeps a copy of it (method, URL, headers,
/// body), for tests that check what the client sent.
final class RecordingTransport: HTTPTransport {
    private let inner: any HTTPTransport
    private let recorded = Recorder<HTTPRequest>()

    init(inner: any HTTPTransport = URLSessionTransport()) { self.inner = inner }

    /// The requests sent to a path ending with `suffix`, in order.
    func requests(pathSuffix suffix: String) -> [HTTPRequest] { recorded.all.filter { $0.url.path.hasSuffix(suffix) } }

    /// The form fields of a request's body (later duplicates win; see `formPairs` for all).
    static func form(_ request: HTTPRequest) -> [String: String] {
        Dictionary(formPairs(request), uniquingKeysWith: { _, last in last })
    }

    /// The form fields of a request's body, in order, duplicates kept.
    static func formPairs(_ request: HTTPRequest) -> [(String, String)] {
        var components = URLComponents()
        components.percentEncodedQuery = String(decoding: request.body ?? Data(), as: UTF8.self).replacingOccurrences(of: "+", with: "%20")
        return (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }
    }

    func send(_ request: HTTPRequest) async throws(AuthError) -> HTTPResponse {
        recorded.append(request)
        return try await inner.send(request)
    }
}
