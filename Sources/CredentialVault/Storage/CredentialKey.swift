/// Identifies one credential: a service plus an account, the convention shared with
/// `secret-tool` and Python `keyring` (attributes `service` and `username`).
///
/// The optional `label` is human-readable metadata. It is not part of the identity: two keys
/// with the same service and account name the same credential whatever their labels.
public struct CredentialKey: Hashable, Sendable, CustomStringConvertible, Codable {
    /// The service the credential belongs to, for example `"api.example.com"`.
    public let service: String
    /// The account within the service, for example a user name or `"refresh_token"`.
    public let account: String
    /// A human-readable label. Backends that have labels (Secret Service) show it; when `nil`,
    /// they show `"<account> on <service>"`.
    public let label: String?

    /// Creates a key. Service and account must be non-empty and contain no NUL character.
    public init(service: String, account: String, label: String? = nil) {
        self.service = service
        self.account = account
        self.label = label
    }

    /// The label a backend shows: `label` if set, else `"<account> on <service>"`.
    public var displayLabel: String { label ?? "\(account) on \(service)" }

    /// Names a credential; names are not secrets, values never appear here.
    public var description: String { "\(service)/\(account)" }

    /// Throws `invalidArgument` for an empty service or account or one holding a NUL, which
    /// Secret Service attributes cannot carry.
    public func validate() throws(CredentialVaultError) {
        if service.isEmpty || account.isEmpty {
            throw .invalidArgument("service and account must not be empty")
        }
        if service.utf8.contains(0) || account.utf8.contains(0) || (label?.utf8.contains(0) ?? false) {
            throw .invalidArgument("service, account and label must not contain NUL characters")
        }
        if service.utf8.count > 4096 || account.utf8.count > 4096 || (label?.utf8.count ?? 0) > 4096 {
            throw .invalidArgument("service, account and label are limited to 4096 bytes each")
        }
    }

    public static func == (lhs: CredentialKey, rhs: CredentialKey) -> Bool {
        lhs.service == rhs.service && lhs.account == rhs.account
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(service)
        hasher.combine(account)
    }
}
