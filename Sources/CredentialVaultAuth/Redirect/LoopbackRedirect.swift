/// Where the loopback listener waits for the browser: `http://127.0.0.1:<port><path>`.
public struct LoopbackRedirect: Sendable, Hashable {
    /// The port to bind.
    public enum Port: Sendable, Hashable {
        /// A free port chosen by the system (RFC 8252 §7.3; needs a provider that accepts any port).
        case ephemeral
        /// A fixed port, for providers that match redirect URIs exactly (glewlwyd does).
        case fixed(UInt16)

        var number: UInt16 {
            if case .fixed(let port) = self { return port }
            return 0
        }
    }

    /// The port.
    public var port: Port
    /// The path (default `/callback`).
    public var path: String

    /// Creates a loopback redirect.
    public init(port: Port = .ephemeral, path: String = "/callback") {
        self.port = port
        self.path = path.hasPrefix("/") ? path : "/" + path
    }
}
