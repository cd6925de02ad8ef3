import CCurl
import Foundation

/// The libcurl side of one request, used on the exchange's own thread only: sets the easy
/// handle up, collects the final response's head and body within the limits, and maps
/// libcurl's outcome to a response or an `AuthError`.
final class CurlTransfer {
    private let request: HTTPRequest
    private let exchange: CurlExchange
    /// The status of the head being read (0 until its status line).
    private var status = 0
    /// The next header line is a status line: at the start, and after the blank line of a 1xx head.
    private var expectingStatusLine = true
    /// The final (non-1xx) head has ended: every later header line is a trailer.
    private var finalHeadEnded = false
    private var headers: [String: String] = [:]
    private var headerBytes = 0
    private var body = Data()
    private var bodyStarted = false
    private var refusal: AuthError?

    init(request: HTTPRequest, exchange: CurlExchange) {
        self.request = request
        self.exchange = exchange
    }

    func perform() -> Result<HTTPResponse, AuthError> {
        guard let handle = curl_easy_init() else { return .failure(.networkError("libcurl could not create a handle")) }
        defer { curl_easy_cleanup(handle) }
        var list: UnsafeMutablePointer<curl_slist>?
        // No "Expect: 100-continue" round trip; the caller's fields as given.
        for line in ["Expect:"] + request.headers.map({ "\($0.key): \($0.value)" }) where !line.contains("\r") && !line.contains("\n") {
            list = curl_slist_append(list, line)
        }
        defer { curl_slist_free_all(list) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let code: CURLcode = request.url.absoluteString.withCString { url in
            let body = request.body ?? Data()
            return body.withUnsafeBytes { bytes in
                do throws(AuthError) { try configure(handle, url: url, headers: list, body: bytes, context: context) } catch {
                    refusal = error
                    return CURLE_FAILED_INIT
                }
                return curl_easy_perform(handle)
            }
        }
        if let refusal { return .failure(refusal) }
        if exchange.isCancelled { return .failure(.cancelled) }
        if code == CURLE_FILESIZE_EXCEEDED { return .failure(ResponseLimit.exceeded(request.maximumResponseSize)) }
        guard code == CURLE_OK else { return .failure(Self.map(code, httpURL: Self.isHTTP(request.url))) }
        var code64 = 0
        _ = cv_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &code64)
        guard (200..<600).contains(code64) else { return .failure(.networkError("malformed HTTP response")) }
        return .success(HTTPResponse(status: code64, headers: headers, body: body))
    }

    /// Sets the easy handle up. Every option is checked: one that libcurl does not accept
    /// (an old or oddly built libcurl) fails the request with `unsupported` before anything
    /// is sent, rather than sending it without the protection the option gives.
    private func configure(
        _ handle: UnsafeMutableRawPointer, url: UnsafePointer<CChar>, headers list: UnsafeMutablePointer<curl_slist>?,
        body: UnsafeRawBufferPointer, context: UnsafeMutableRawPointer
    ) throws(AuthError) {
        let timeout = max(1, Int(min(request.timeout.secondsValue * 1000, 86_400_000).rounded(.up)))
        try Self.check("URL", cv_curl_set_pointer(handle, CURLOPT_URL, url))
        try Self.check("NOSIGNAL", cv_curl_set_long(handle, CURLOPT_NOSIGNAL, 1))
        try Self.check("TIMEOUT_MS", cv_curl_set_long(handle, CURLOPT_TIMEOUT_MS, timeout))
        try Self.check("CONNECTTIMEOUT_MS", cv_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, timeout))
        try Self.check("FOLLOWLOCATION", cv_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0))
        // Strings are copied by libcurl.
        try Self.check("PROTOCOLS_STR", "http,https".withCString { cv_curl_set_pointer(handle, CURLOPT_PROTOCOLS_STR, $0) })
        try Self.check("REDIR_PROTOCOLS_STR", "https".withCString { cv_curl_set_pointer(handle, CURLOPT_REDIR_PROTOCOLS_STR, $0) })
        // No proxy, whatever http_proxy, HTTPS_PROXY or ALL_PROXY say: the token endpoint's
        // form (client secret, refresh token, code) goes to the host of the URL and nowhere else.
        try Self.check("PROXY", "".withCString { cv_curl_set_pointer(handle, CURLOPT_PROXY, $0) })
        try Self.check("SSL_VERIFYPEER", cv_curl_set_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
        try Self.check("SSL_VERIFYHOST", cv_curl_set_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
        try Self.check("MAXFILESIZE_LARGE", cv_curl_set_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.maximumResponseSize)))
        try Self.check("HTTPHEADER", cv_curl_set_pointer(handle, CURLOPT_HTTPHEADER, list))
        switch request.method {
        case "GET": try Self.check("HTTPGET", cv_curl_set_long(handle, CURLOPT_HTTPGET, 1))
        case "POST":
            try Self.check("POST", cv_curl_set_long(handle, CURLOPT_POST, 1))
            try setBody(handle, body)
        default:
            try Self.check("CUSTOMREQUEST", request.method.withCString { cv_curl_set_pointer(handle, CURLOPT_CUSTOMREQUEST, $0) })
            if !body.isEmpty { try setBody(handle, body) }
        }
        try Self.check(
            "HEADERFUNCTION",
            cv_curl_set_data_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
                Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().header(data, size * count)
            })
        try Self.check("HEADERDATA", cv_curl_set_pointer(handle, CURLOPT_HEADERDATA, context))
        try Self.check(
            "WRITEFUNCTION",
            cv_curl_set_data_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().receive(data, size * count)
            })
        try Self.check("WRITEDATA", cv_curl_set_pointer(handle, CURLOPT_WRITEDATA, context))
        try Self.check("NOPROGRESS", cv_curl_set_long(handle, CURLOPT_NOPROGRESS, 0))
        try Self.check(
            "XFERINFOFUNCTION",
            cv_curl_set_progress_callback(handle) { context, _, _, _, _ in
                Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().exchange.isCancelled ? 1 : 0
            })
        try Self.check("XFERINFODATA", cv_curl_set_pointer(handle, CURLOPT_XFERINFODATA, context))
    }

    /// A `curl_easy_setopt` result: anything but `CURLE_OK` refuses the request.
    static func check(_ option: String, _ code: CURLcode) throws(AuthError) {
        guard code == CURLE_OK else {
            throw .unsupported("libcurl did not accept CURLOPT_\(option) (error \(code.rawValue)): the request was not sent")
        }
    }

    /// The request body, copied by libcurl (an empty one as an empty string).
    private func setBody(_ handle: UnsafeMutableRawPointer, _ body: UnsafeRawBufferPointer) throws(AuthError) {
        try Self.check("POSTFIELDSIZE_LARGE", cv_curl_set_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
        if let base = body.baseAddress, !body.isEmpty {
            try Self.check("COPYPOSTFIELDS", cv_curl_set_pointer(handle, CURLOPT_COPYPOSTFIELDS, base))
        } else {
            try Self.check("COPYPOSTFIELDS", "".withCString { cv_curl_set_pointer(handle, CURLOPT_COPYPOSTFIELDS, $0) })
        }
    }

    /// One header line. A status line is recognised only where one can be (the first line, or
    /// the one after the blank line of a 1xx head) and starts a new head; every line after the
    /// blank line of the final head is a trailer and ignored (also with an empty chunked body,
    /// where no body byte comes between); the whole head is bounded.
    private func header(_ data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        if exchange.isCancelled { return 0 }
        headerBytes += count
        guard headerBytes <= CurlTransport.maximumHeaderSize else {
            refusal = .invalidResponse("the response headers are larger than \(CurlTransport.maximumHeaderSize / 1024) KiB")
            return 0
        }
        guard !bodyStarted, !finalHeadEnded, let data else { return count }
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: count), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        if expectingStatusLine {
            guard line.hasPrefix("HTTP/") else { return count }  // libcurl has already refused what is not a status line
            expectingStatusLine = false
            headers = [:]
            status = line.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
            return count
        }
        if line.isEmpty {
            if (100..<200).contains(status) { expectingStatusLine = true } else { finalHeadEnded = true }
            return count
        }
        guard let colon = line.firstIndex(of: ":") else { return count }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        return count
    }

    /// Body bytes, refused beyond the request's limit.
    private func receive(_ data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        if exchange.isCancelled { return 0 }
        bodyStarted = true
        guard body.count + count <= request.maximumResponseSize else {
            refusal = ResponseLimit.exceeded(request.maximumResponseSize)
            return 0
        }
        if let data, count > 0 { body.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: count) }
        return count
    }

    /// Whether `url` is http(s), the only schemes libcurl is allowed to speak.
    static func isHTTP(_ url: URL) -> Bool { ["http", "https"].contains(url.scheme?.lowercased() ?? "") }

    /// libcurl's failure as an auth error (transient ones as `networkError` or `timedOut`).
    /// For an http(s) URL, `CURLE_UNSUPPORTED_PROTOCOL` means the answer was not HTTP/1.x or
    /// HTTP/2 (an HTTP/0.9 body without a status line, a status such as `099`).
    static func map(_ code: CURLcode, httpURL: Bool) -> AuthError {
        switch code {
        case CURLE_OPERATION_TIMEDOUT: .timedOut
        case CURLE_ABORTED_BY_CALLBACK: .cancelled
        case CURLE_COULDNT_CONNECT: .networkError("connection refused")
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: .networkError("host not found")
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS:
            .networkError("TLS failure")
        case CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            .networkError("connection lost")
        case CURLE_UNSUPPORTED_PROTOCOL:
            .networkError(httpURL ? "malformed HTTP response (not an HTTP/1.x or HTTP/2 status line)" : "not an http(s) URL")
        default: .networkError("malformed HTTP response (libcurl error \(code.rawValue))")
        }
    }
}
