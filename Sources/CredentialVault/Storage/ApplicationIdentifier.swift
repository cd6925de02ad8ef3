#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The application a store belongs to: its namespace on every backend.
///
/// A reverse-DNS name such as `"org.example.Desktop"`, given once (to `BackendResolver`, or to a
/// store's configuration), scopes
/// - the default service of the string conveniences (`save(key:value:)`): the identifier itself;
/// - the Secret Service items: each carries the attribute `credential-vault:application` with
///   the identifier, and the store's searches include it, so two applications using the same
///   `CredentialKey` never see, overwrite or delete each other's items (tools that know no
///   namespaces, `secret-tool store`/`clear` and Python `keyring`, match an application's item
///   by `service` and `username` and can replace or delete it, as any process of the user can);
/// - the default sealed-file vault: `$XDG_DATA_HOME/<identifier>/credentials.cvault`.
///
/// `ApplicationIdentifier.credvault` is the namespace of the `credvault` command line and of
/// everything stored before identifiers existed: service `"credential-vault"`, the vault
/// `$XDG_DATA_HOME/credential-vault/default.cvault`, and unscoped Secret Service items, which
/// `secret-tool` and Python `keyring` share. An unscoped store skips applications' items: it
/// never reads, lists, replaces or deletes them.
///
/// **Moving to an identifier.** An application that used the defaults before keeps its
/// credentials in the `credvault` namespace; nothing moves them automatically (a silent move
/// could take another program's credentials). Copy them once with `CredentialMigrator`, from a
/// store opened with `.credvault` (or the old vault path) to the one of the new identifier,
/// then delete the old ones.
public struct ApplicationIdentifier: Sendable, Hashable, CustomStringConvertible {
    /// The identifier, for example `"org.example.Desktop"` (`"credential-vault"` for `credvault`).
    public let name: String
    /// Whether this is the unscoped `credvault` namespace.
    public let isUnscoped: Bool

    /// The longest identifier accepted, in bytes (a file name must fit in 255 bytes).
    public static let maximumLength = 255
    /// The longest label accepted, in bytes (as in DNS).
    public static let maximumLabelLength = 63

    /// The namespace of the `credvault` command line and of credentials stored before
    /// identifiers existed (see the type's documentation).
    public static let credvault = ApplicationIdentifier(unscoped: "credential-vault")

    /// Validates a reverse-DNS name: at least two labels separated by dots, each of 1 to 63
    /// ASCII letters, digits, `-` or `_`, at most 255 bytes in all. Throws `invalidArgument`
    /// otherwise (names are case-sensitive, compared by their bytes).
    public init(_ name: String) throws(CredentialVaultError) {
        let labels = name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard name.utf8.count <= Self.maximumLength else {
            throw .invalidArgument("an application identifier has at most \(Self.maximumLength) bytes")
        }
        guard labels.count >= 2 else {
            throw .invalidArgument("an application identifier is a reverse-DNS name such as org.example.App (two labels at least)")
        }
        for label in labels {
            guard !label.isEmpty, label.count <= Self.maximumLabelLength else {
                throw .invalidArgument(
                    "each label of an application identifier has 1 to \(Self.maximumLabelLength) characters (no empty label)")
            }
            guard label.allSatisfy(Self.isLabelByte) else {
                throw .invalidArgument("an application identifier has only ASCII letters, digits, '-', '_' and dots")
            }
        }
        self.name = name
        isUnscoped = false
    }

    private init(unscoped name: String) {
        self.name = name
        isUnscoped = true
    }

    /// The service the string conveniences use: the identifier (`"credential-vault"` for `credvault`).
    public var defaultService: String { name }

    /// The value of the Secret Service attribute `credential-vault:application` on this
    /// application's items; `nil` for `credvault`, whose items carry none.
    public var secretServiceScope: String? { isUnscoped ? nil : name }

    /// The default sealed-file vault: `$XDG_DATA_HOME/<identifier>/credentials.cvault`, and
    /// `$XDG_DATA_HOME/credential-vault/default.cvault` for `credvault` (its documented path).
    public var defaultVaultURL: URL {
        XDGDirectories.data.appendingPathComponent(isUnscoped ? "\(name)/default.cvault" : "\(name)/credentials.cvault")
    }

    /// The identifier.
    public var description: String { name }

    private static func isLabelByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
