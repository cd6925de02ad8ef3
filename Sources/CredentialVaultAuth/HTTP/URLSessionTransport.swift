import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport over Foundation's `URLSession` with no cookies, no cache and no credential
/// storage, a per-request deadline (`HTTPRequest.timeout`) enforced both by `URLSession` and
/// by a watchdog, and redirects not followed (an OAuth endpoint that redirects is answered as
/// a 3xx response). The default on platforms other than Linux. On Linux, FoundationNetworking
/// stops the process on a response with HTTP trailers (swift-corelibs-foundation #5285) and
/// buffers a whole body before `maximumResponseSize` can be checked: use `CurlTransport`
/// (the default there) with any provider you do not control.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// Creates a transport with its own ephemeral session.
    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

    deinit { session.invalidateAndCancel() }

    /// Sends the request, failing with `timedOut` at its deadline.
    public func send(_ request: HTTPRequest) async throws(AuthError) -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        // swift-corelibs-foundation truncates timeoutInterval to whole seconds (0.3 s times out
        // at once): give URLSession the deadline rounded up, the watchdog below enforces it exactly.
        urlRequest.timeoutInterval = max(request.timeout.secondsValue.rounded(.up), 1)
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        let session = self.session
        let timeout = request.timeout
        let prepared = urlRequest
        do {
            return try await Deadline.run(timeout) {
                let (data, response) = try await session.data(for: prepared)
                guard let http = response as? HTTPURLResponse else {
                    throw AuthError.invalidResponse("not an HTTP response")
                }
                var headers: [String: String] = [:]
                for (name, value) in http.allHeaderFields {
                    if let name = name as? String, let value = value as? String { headers[name] = value }
                }
                guard data.count <= request.maximumResponseSize else { throw ResponseLimit.exceeded(request.maximumResponseSize) }
                return HTTPResponse(status: http.statusCode, headers: headers, body: data)
            }
        } catch let error as AuthError {
            throw error
        } catch let error as URLError {
            throw Self.map(error)
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .networkError("transport failure")
        }
    }

    static func map(_ error: URLError) -> AuthError {
        switch error.code {
        case .timedOut: .timedOut
        case .cancelled: .cancelled
        case .cannotConnectToHost: .networkError("connection refused")
        case .cannotFindHost, .dnsLookupFailed: .networkError("host not found")
        case .networkConnectionLost: .networkError("connection lost")
        case .notConnectedToInternet: .networkError("not connected")
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            .networkError("TLS failure")
        default: .networkError("URL error \(error.code.rawValue)")
        }
    }
}

/// Refuses redirects: the response itself is handed back.
private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
