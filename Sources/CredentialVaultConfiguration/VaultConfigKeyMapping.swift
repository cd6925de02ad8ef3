// Compiled with the package trait `Configuration` only: without it the module is empty and
// swift-configuration is neither fetched nor built.
#if Configuration
import Configuration
import CredentialVault

/// How configuration keys name credentials: one service, and accounts made of a prefix and the
/// key's components joined with `"."`.
///
/// **The rule.** The configuration key with components `c1, c2, ..., cn` (n ≥ 1; `"db.password"`
/// read through a `ConfigReader` is `["db", "password"]`) is the credential
///
///     service: `service`
///     account: `prefix` + c1 + "." + c2 + ... + "." + cn
///
/// when every component is non-empty and contains neither `"."` nor NUL, and the account is at
/// most 4096 UTF-8 bytes. Any other key names no credential: the provider answers "absent" for
/// it (the next provider of a `ConfigReader` answers), never another credential. Because no
/// component contains the separator, two different keys never give the same account (the rule
/// is injective), and the rule is inverted exactly (`configKey(for:)`): the credentials of
/// `service` whose account starts with the bytes of `prefix`, and whose remainder splits on
/// `"."` into non-empty components, are the configuration values; other credentials of the
/// service (`"db..password"`, `"db."`, an account equal to the prefix, another prefix) are not
/// configuration and are never read.
///
/// Names compare by their UTF-8 bytes, as everywhere in CredentialVault (`CredentialKey`): a
/// precomposed "é" and a decomposed one are two keys. A key's context (`AbsoluteConfigKey.context`)
/// is not part of the name: every context reads the same credential.
///
/// Example: `VaultConfigKeyMapping(service: "api.example.com", prefix: "config/")` reads
/// `config.string(forKey: "db.password", isSecret: true)` from the credential
/// `api.example.com` / `config/db.password` (`credvault set api.example.com config/db.password`).
public struct VaultConfigKeyMapping: Sendable, Hashable, CustomStringConvertible {
    /// The service of every credential the provider reads.
    public let service: String
    /// What every account starts with (may be empty: then every account of the service that
    /// follows the rule is a configuration value).
    public let prefix: String

    /// The separator of a key's components in an account: `"."`, as `ConfigKey("db.password")`.
    public static let separator: UInt8 = UInt8(ascii: ".")
    /// The longest account (bytes), as `CredentialKey.validate()` allows.
    public static let maximumAccountBytes = 4096

    /// A mapping to the credentials of `service` whose accounts start with `prefix`. Throws
    /// `invalidArgument` for an empty service, a NUL in either, or a service or prefix longer
    /// than 4096 bytes (the message never repeats them).
    public init(service: String, prefix: String = "") throws(CredentialVaultError) {
        try CredentialKey(service: service, account: prefix).validate()
        self.service = service
        self.prefix = prefix
    }

    /// The account of `key`, or `nil` when the rule cannot represent it (see the type).
    public func account(for key: AbsoluteConfigKey) -> String? {
        guard let suffix = Self.joined(key.components) else { return nil }
        let account = prefix + suffix
        guard account.utf8.count <= Self.maximumAccountBytes else { return nil }
        return account
    }

    /// The credential of `key`, or `nil` when the rule cannot represent it (see the type).
    public func credentialKey(for key: AbsoluteConfigKey) -> CredentialKey? {
        account(for: key).map { CredentialKey(service: service, account: $0) }
    }

    /// The configuration key of `credential`, or `nil` when it is not a configuration value
    /// (another service, another prefix, or a remainder that is not non-empty components
    /// joined with `"."`). `credentialKey(for: configKey(for: c)!) == c` for every such `c`.
    public func configKey(for credential: CredentialKey) -> AbsoluteConfigKey? {
        guard credential.isIn(service: service) else { return nil }
        let account = Array(credential.account.utf8)
        let prefixBytes = Array(prefix.utf8)
        guard account.count > prefixBytes.count, account.starts(with: prefixBytes) else { return nil }
        // The prefix is whole UTF-8 (a String's bytes), so the remainder starts on a scalar.
        let components = account[prefixBytes.count...].split(separator: Self.separator, omittingEmptySubsequences: false)
        guard components.allSatisfy({ !$0.isEmpty }) else { return nil }
        return AbsoluteConfigKey(components.map { String(decoding: $0, as: UTF8.self) })
    }

    /// The key's components joined with `"."`, `nil` when one is empty or holds `"."` or NUL
    /// (or there are none): the remainder of the account after the prefix.
    static func joined(_ components: [String]) -> String? {
        guard !components.isEmpty else { return nil }
        for component in components {
            if component.isEmpty || component.utf8.contains(separator) || component.utf8.contains(0) { return nil }
        }
        return components.joined(separator: ".")
    }

    /// The service and the prefix are names, not secrets, but the library never prints
    /// credential names unasked: this says only that it is a mapping.
    public var description: String { "VaultConfigKeyMapping(\(service.utf8.count)-byte service, \(prefix.utf8.count)-byte prefix)" }

    /// Equal when service and prefix have the same UTF-8 bytes.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        CredentialKey.sameName(lhs.service, rhs.service) && CredentialKey.sameName(lhs.prefix, rhs.prefix)
    }

    /// Hashes the UTF-8 bytes of service and prefix.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(CredentialKey(service: service, account: prefix))
    }
}
#endif
