import CCurl
import CredentialVault
import Foundation
import Synchronization

/// The default transport on Linux: libcurl, one easy handle per request on a thread of its
/// own (never the cooperative pool). Unlike FoundationNetworking's URLSession, no response
/// shape can stop the process or outlive the deadline: trailers are ignored, 1xx responses
/// skipped, malformed chunking, an early close or garbage are a `networkError`, a slow drip
/// hits `HTTPRequest.timeout` (to the millisecond), headers beyond 64 KiB and bodies beyond
/// `HTTPRequest.maximumResponseSize` are refused while they arrive. Redirects are not
/// followed, only http and https are spoken, TLS certificates and host names are verified,
/// no proxy is used (`http_proxy`, `HTTPS_PROXY`, `ALL_PROXY` are ignored), a libcurl option
/// that is not accepted fails the request with `unsupported`, and nothing (cookies,
/// credentials, cache) is kept between requests.
public final class CurlTransport: HTTPTransport {
    /// The largest response head accepted (status line and header fields), in bytes.
    public static let maximumHeaderSize = 64 * 1024

    /// `curl_global_init`, once per process.
    private static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    /// Creates a transport.
    public init() {}

    /// Sends the request; fails with `timedOut` at its deadline and `cancelled` at once when
    /// the calling task is cancelled.
    public func send(_ request: HTTPRequest) async throws(AuthError) -> HTTPResponse {
        guard Self.initialized else { throw .networkError("libcurl could not be initialised") }
        let exchange = CurlExchange()
        let result: Result<HTTPResponse, AuthError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                exchange.start(request) { continuation.resume(returning: $0) }
            }
        } onCancel: {
            exchange.cancel()
        }
        return try result.get()
    }
}

/// One request in flight: delivers its outcome exactly once (the transfer's, or `cancelled`
/// as soon as the caller gives up, the transfer then aborting at its next callback).
final class CurlExchange: Sendable {
    private let completion = Mutex<(@Sendable (Result<HTTPResponse, AuthError>) -> Void)?>(nil)
    private let cancelled = Atomic<Bool>(false)

    /// Whether the caller gave up (read by the transfer's callbacks).
    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    func start(_ request: HTTPRequest, completion handler: @escaping @Sendable (Result<HTTPResponse, AuthError>) -> Void) {
        completion.withLock { $0 = handler }
        if isCancelled { return finish(.failure(.cancelled)) }
        // The thread takes the request out of the slot and lets go of it before the result is
        // delivered: a process that exits as soon as it has its answer (the CLI) must not have
        // a thread still holding the form (client secret, refresh token) while it tears down,
        // which LeakSanitizer also reports as a leak.
        let slot = PendingRequest(request)
        let started = PlainThread.start {
            let result = Self.transfer(slot.take(), exchange: self)
            self.finish(result)
        }
        if !started { finish(.failure(.networkError("no thread could be started for the request"))) }
    }

    /// Runs the transfer; the request and the transfer are released when this returns.
    private static func transfer(_ request: HTTPRequest?, exchange: CurlExchange) -> Result<HTTPResponse, AuthError> {
        guard let request else { return .failure(.cancelled) }
        return CurlTransfer(request: request, exchange: exchange).perform()
    }

    func cancel() {
        cancelled.store(true, ordering: .relaxed)
        finish(.failure(.cancelled))
    }

    private func finish(_ result: Result<HTTPResponse, AuthError>) {
        let handler = completion.withLock { handler in
            defer { handler = nil }
            return handler
        }
        handler?(result)
    }
}

/// A request handed to a transfer thread once: taken out, so that nothing else holds it.
private final class PendingRequest: Sendable {
    private let request: Mutex<HTTPRequest?>

    init(_ request: HTTPRequest) { self.request = Mutex(request) }

    /// The request, the first time; `nil` afterwards.
    func take() -> HTTPRequest? { request.withLock { $0.take() } }
}
