/// Which libsecret keyring file a `.libsecretFile` decision opens and where its key comes from
/// (for `credvault info` and logs; never the key itself).
public struct LibsecretFileTarget: Sendable, Hashable, CustomStringConvertible {
    /// Where the file's key comes from.
    public enum KeyOrigin: String, Sendable, Hashable, CustomStringConvertible {
        /// The Secret portal's 64 bytes for this app (inside a sandbox, as libsecret does there).
        case portal
        /// The password the program gave (`BackendResolver.libsecretFilePassword`).
        case password

        /// "the Secret portal's secret for this app", "the password given".
        public var description: String {
            switch self {
            case .portal: "the Secret portal's secret for this app"
            case .password: "the password given"
            }
        }
    }

    /// The keyring file.
    public var path: String
    /// Where its key comes from.
    public var key: KeyOrigin

    /// Creates a target.
    public init(path: String, key: KeyOrigin) {
        self.path = path
        self.key = key
    }

    /// `<path>, key from <origin>`.
    public var description: String { "\(path), key from \(key)" }
}
