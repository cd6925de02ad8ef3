import Foundation

/// One HTTP request made by the auth client.
public struct HTTPRequest: Sendable, CustomStringConvertible {
    /// `GET` or `POST`.
    public var method: String
    /// The URL.
    public var url: URL
    /// Header fields.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?
    /// The deadline for the whole exchange (connect, send, receive).
    public var timeout: Duration
    /// The largest response body accepted, in bytes (default 1 MiB). Transports stop
    /// receiving beyond it and fail with `AuthError.invalidResponse`.
    public var maximumResponseSize: Int

    /// The default `maximumResponseSize`.
    public static let defaultMaximumResponseSize = 1 << 20

    /// Creates a request.
    public init(
        method: String = "GET", url: URL, headers: [String: String] = [:], body: Data? = nil, timeout: Duration,
        maximumResponseSize: Int = defaultMaximumResponseSize
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
    }

    /// Method and URL without query (headers and bodies carry secrets and are never described).
    public var description: String { "\(method) \(Redactor.describe(url))" }
}

/// One HTTP response.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields, names in lower case.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// Creates a response; header names are lower-cased.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.body = body
    }
}

/// Sends HTTP requests. The default is `DefaultHTTPTransport.make()` (`CurlTransport` on
/// Linux); inject another one to route requests elsewhere or to count them. Implementations
/// honour `request.timeout` and `request.maximumResponseSize`, and map failures to
/// `AuthError.networkError`, `AuthError.timedOut` or `AuthError.invalidResponse`.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the provider's response, whatever its status.
    func send(_ request: HTTPRequest) async throws(AuthError) -> HTTPResponse
}
