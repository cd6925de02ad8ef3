/// Identifies one credential: a service plus an account, the convention shared with
/// `secret-tool` and Python `keyring` (attributes `service` and `username`).
///
/// Names compare by their exact UTF-8 bytes, on every backend, as the Secret Service does:
/// "café" precomposed (U+00E9) and decomposed (U+0065 U+0301) are two credentials (Swift's
/// `String ==`, which compares by canonical equivalence, is not used). The optional `label`
/// is human-readable metadata. It is not part of the identity: two keys with the same service
/// and account name the same credential whatever their labels.
///
/// Names are data: any character the backends can store is part of a name, white space,
/// punctuation and control characters (TAB, LF, ESC, DEL, C1) included, as in the Secret
/// Service, Python `keyring` and `secret-tool`; only NUL is refused (the Secret Service cannot
/// carry it). The service must be non-empty; the account may be empty (git's and Python
/// keyring's empty user names). Each is at most 4096 bytes. Every backend refuses anything else
/// with `invalidArgument` in `save`, `load`, `take`, `delete` and `metadata` (see `validate()`).
/// Whoever prints a name escapes it (the CLI writes control characters as `\xHH`): a name can
/// then neither forge lines of a listing nor reach a terminal as an escape sequence.
public struct CredentialKey: Hashable, Sendable, CustomStringConvertible, Codable {
    /// The service the credential belongs to, for example `"api.example.com"`.
    public let service: String
    /// The account within the service, for example a user name or `"refresh_token"`.
    public let account: String
    /// A human-readable label. Backends that have labels (Secret Service) show it; when `nil`,
    /// they show `"<account> on <service>"`.
    public let label: String?

    /// Creates a key. The service must be non-empty; service and account are at most 4096 bytes
    /// each, without NUL (checked by the backends, see `validate()`).
    public init(service: String, account: String, label: String? = nil) {
        self.service = service
        self.account = account
        self.label = label
    }

    /// The label a backend shows: `label` if set, else `"<account> on <service>"`.
    public var displayLabel: String { label ?? "\(account) on \(service)" }

    /// Names a credential; names are not secrets, values never appear here.
    public var description: String { "\(service)/\(account)" }

    /// Throws `invalidArgument` for an empty service, a service, account or label longer than
    /// 4096 bytes, or a NUL in any of them (Secret Service attributes and labels cannot carry
    /// it). Every other character is part of the name. The message never repeats the name.
    public func validate() throws(CredentialVaultError) {
        if service.isEmpty {
            throw .invalidArgument("the service must not be empty")
        }
        if service.utf8.contains(0) || account.utf8.contains(0) || (label?.utf8.contains(0) ?? false) {
            throw .invalidArgument("service, account and label must not contain NUL characters")
        }
        if service.utf8.count > 4096 || account.utf8.count > 4096 || (label?.utf8.count ?? 0) > 4096 {
            throw .invalidArgument("service, account and label are limited to 4096 bytes each")
        }
    }

    /// Whether `name` holds a C0 control character, DEL or a C1 control character.
    public static func hasControlCharacter(_ name: String) -> Bool {
        name.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    /// Equal when service and account have the same UTF-8 bytes (labels are ignored).
    public static func == (lhs: CredentialKey, rhs: CredentialKey) -> Bool {
        sameName(lhs.service, rhs.service) && sameName(lhs.account, rhs.account)
    }

    /// Hashes the UTF-8 bytes of service and account.
    public func hash(into hasher: inout Hasher) {
        Self.hashName(service, into: &hasher)
        Self.hashName(account, into: &hasher)
    }

    /// Whether two names are the same name: the same UTF-8 bytes (the one rule for every
    /// comparison of names, service filters included).
    public static func sameName(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && lhs.utf8.elementsEqual(rhs.utf8)
    }

    /// Whether this key belongs to `service` (`nil`: to any), by exact bytes.
    public func isIn(service: String?) -> Bool {
        service.map { Self.sameName(self.service, $0) } ?? true
    }

    /// Sorts by service, then account, in UTF-8 byte order (stable across locales), as every
    /// backend's `listKeys` does.
    public static func storageOrder(_ lhs: CredentialKey, _ rhs: CredentialKey) -> Bool {
        if !sameName(lhs.service, rhs.service) { return lhs.service.utf8.lexicographicallyPrecedes(rhs.service.utf8) }
        return lhs.account.utf8.lexicographicallyPrecedes(rhs.account.utf8)
    }

    private static func hashName(_ name: String, into hasher: inout Hasher) {
        var name = name
        name.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(UInt8(0xFF))  // never in UTF-8: keeps ("ab", "c") and ("a", "bc") apart
    }
}
