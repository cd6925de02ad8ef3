/// The state of the Secret Service's default collection, as `SecretServiceStore.status()` finds it.
public struct SecretServiceStatus: Sendable, Hashable, CustomStringConvertible {
    /// Whether the default collection is locked (persistent credentials cannot be read or
    /// written until it is unlocked).
    public var isLocked: Bool
    /// The collection's label, for example `"Login"`.
    public var collectionLabel: String
    /// The collection's D-Bus object path, for example `/org/freedesktop/secrets/collection/login`.
    public var collectionPath: String

    /// Creates a status.
    public init(isLocked: Bool, collectionLabel: String, collectionPath: String) {
        self.isLocked = isLocked
        self.collectionLabel = collectionLabel
        self.collectionPath = collectionPath
    }

    /// For example `Secret Service collection "Login" (/org/freedesktop/secrets/collection/login), unlocked`.
    public var description: String {
        "Secret Service collection \"\(collectionLabel)\" (\(collectionPath)), \(isLocked ? "locked" : "unlocked")"
    }
}
