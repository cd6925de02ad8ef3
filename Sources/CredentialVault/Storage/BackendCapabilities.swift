/// What a backend can honour. A request for anything else throws `unsupported`: nothing is
/// ever silently downgraded.
public struct BackendCapabilities: Sendable, Hashable, CustomStringConvertible {
    /// Credentials survive the process (and a reboot).
    public var isPersistent: Bool
    /// `.deviceOnly` credentials are really bound to this machine.
    public var supportsDeviceOnly: Bool
    /// `.portable` credentials can be stored.
    public var supportsPortable: Bool
    /// `.ephemeral` credentials (TTL, take, never listed) can be stored.
    public var supportsEphemeral: Bool
    /// Several processes may use the same store at once without losing writes.
    public var isCrossProcessSafe: Bool

    /// Creates a capability set.
    public init(
        isPersistent: Bool, supportsDeviceOnly: Bool, supportsPortable: Bool,
        supportsEphemeral: Bool, isCrossProcessSafe: Bool
    ) {
        self.isPersistent = isPersistent
        self.supportsDeviceOnly = supportsDeviceOnly
        self.supportsPortable = supportsPortable
        self.supportsEphemeral = supportsEphemeral
        self.isCrossProcessSafe = isCrossProcessSafe
    }

    /// Throws `invalidArgument` or `unsupported` when `options` cannot be honoured here.
    public func check(_ options: StorageOptions) throws(CredentialVaultError) {
        try options.validate()
        if options.accessibility == .deviceOnly && !supportsDeviceOnly {
            throw .unsupported("this backend cannot keep a credential device-only")
        }
        if options.accessibility == .portable && !supportsPortable {
            throw .unsupported("this backend cannot store portable credentials")
        }
        if options.lifetime.isEphemeral && !supportsEphemeral {
            throw .unsupported("this backend cannot store ephemeral credentials")
        }
    }

    /// The capabilities as words, for `credvault info`.
    public var description: String {
        var words: [String] = []
        words.append(isPersistent ? "persistent" : "not persistent")
        if supportsDeviceOnly { words.append("device-only") }
        if supportsPortable { words.append("portable") }
        if supportsEphemeral { words.append("ephemeral") }
        words.append(isCrossProcessSafe ? "cross-process safe" : "single process")
        return words.joined(separator: ", ")
    }
}
