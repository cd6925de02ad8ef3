/// The transport the clients use when none is given: `CurlTransport` on Linux (where
/// FoundationNetworking's `URLSession` stops the process on responses with trailers and
/// rounds sub-second deadlines), `URLSessionTransport` elsewhere.
public enum DefaultHTTPTransport {
    /// A new default transport.
    public static func make() -> any HTTPTransport {
        #if os(Linux)
        CurlTransport()
        #else
        URLSessionTransport()
        #endif
    }
}
