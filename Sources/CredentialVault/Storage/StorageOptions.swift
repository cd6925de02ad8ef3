/// Where a credential may be read.
public enum Accessibility: String, Sendable, Hashable, Codable {
    /// Readable only on this machine (the Linux counterpart of Keychain's `ThisDeviceOnly`).
    /// The default: a credential leaves the machine only when the application says so.
    case deviceOnly
    /// Readable wherever the store itself can be opened (a sealed file copied elsewhere and
    /// unlocked with its passphrase or key file), and included in exports and migrations.
    case portable
}

/// How long a credential lives.
public enum Lifetime: Sendable, Hashable {
    /// Kept until deleted.
    case persistent
    /// Kept for one round trip (a PKCE `code_verifier`, a `state`, a `nonce`): expires after
    /// `ttl`, is consumed with `take`, is never listed, exported or migrated, and is always
    /// device-only.
    case ephemeral(ttl: Duration)

    /// The default time to live of an ephemeral credential: 10 minutes.
    public static let defaultEphemeralTTL: Duration = .seconds(600)
    /// The longest time to live of an ephemeral credential: a year (366 days). Longer is
    /// `invalidArgument` (and would overflow expiry stamps).
    public static let longestEphemeralTTL: Duration = .seconds(366 * 86_400)

    /// `true` for `.ephemeral`.
    public var isEphemeral: Bool {
        if case .ephemeral = self { return true }
        return false
    }
}

/// Options given with each saved credential.
public struct StorageOptions: Sendable, Hashable {
    /// Where the credential may be read. Default `.deviceOnly`.
    public var accessibility: Accessibility
    /// How long it lives. Default `.persistent`.
    public var lifetime: Lifetime

    /// Creates options; the defaults are a persistent, device-only credential.
    public init(accessibility: Accessibility = .deviceOnly, lifetime: Lifetime = .persistent) {
        self.accessibility = accessibility
        self.lifetime = lifetime
    }

    /// A persistent, device-only credential.
    public static let `default` = StorageOptions()
    /// A persistent credential that may leave this machine.
    public static let portable = StorageOptions(accessibility: .portable)

    /// A device-only credential that expires after `ttl` (default 10 minutes).
    public static func ephemeral(ttl: Duration = Lifetime.defaultEphemeralTTL) -> StorageOptions {
        StorageOptions(accessibility: .deviceOnly, lifetime: .ephemeral(ttl: ttl))
    }

    /// Throws `invalidArgument` for combinations that cannot be honoured by any backend:
    /// an ephemeral credential is always device-only, and its TTL must be positive.
    public func validate() throws(CredentialVaultError) {
        if case .ephemeral(let ttl) = lifetime {
            if accessibility == .portable {
                throw .invalidArgument("ephemeral credentials are always device-only; drop .portable")
            }
            if ttl <= .zero {
                throw .invalidArgument("an ephemeral credential needs a positive time to live")
            }
            if ttl > Lifetime.longestEphemeralTTL {
                throw .invalidArgument("an ephemeral credential lives at most a year; store a persistent one instead")
            }
        }
    }
}

extension Duration {
    /// The duration in (fractional) seconds.
    package var timeInterval: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
