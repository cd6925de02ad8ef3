/// The state of the Secret Service's default collection, as `SecretServiceStore.status()` finds it.
public struct SecretServiceStatus: Sendable, Hashable, CustomStringConvertible {
    /// Whether the default collection is locked (persistent credentials cannot be read or
    /// written until it is unlocked).
    public var isLocked: Bool
    /// The collection's label, for example `"Login"` (for a provider that gives none, such as
    /// KeePassXC, the last part of its path: the database's name).
    public var collectionLabel: String
    /// The collection's D-Bus object path, for example `/org/freedesktop/secrets/collection/login`.
    public var collectionPath: String
    /// Which program serves the Secret Service.
    public var provider: SecretServiceProvider
    /// Whether the provider keeps ephemeral credentials (it has a `session` collection, kept in
    /// memory only: gnome-keyring has one, KeePassXC and KWallet have none).
    public var supportsEphemeral: Bool

    /// Creates a status.
    public init(
        isLocked: Bool, collectionLabel: String, collectionPath: String, provider: SecretServiceProvider = .other,
        supportsEphemeral: Bool = true
    ) {
        self.isLocked = isLocked
        self.collectionLabel = collectionLabel
        self.collectionPath = collectionPath
        self.provider = provider
        self.supportsEphemeral = supportsEphemeral
    }

    /// For example `Secret Service collection "Login" (/org/freedesktop/secrets/collection/login), unlocked`.
    public var description: String {
        "Secret Service collection \"\(collectionLabel)\" (\(collectionPath)), \(isLocked ? "locked" : "unlocked")"
    }
}
