/// Identifies one credential: a service plus an account, the convention shared with
/// `secret-tool` and Python `keyring` (attributes `service` and `username`).
///
/// Names compare by their exact UTF-8 bytes, on every backend, as the Secret Service does:
/// "café" precomposed (U+00E9) and decomposed (U+0065 U+0301) are two credentials (Swift's
/// `String ==`, which compares by canonical equivalence, is not used). The optional `label`
/// is human-readable metadata. It is not part of the identity: two keys with the same service
/// and account name the same credential whatever their labels.
///
/// Service and account must be non-empty, at most 4096 bytes, and free of control characters
/// (C0 U+0000-U+001F, DEL U+007F, C1 U+0080-U+009F): a TAB or LF would forge lines of a
/// listing, an ESC would reach a terminal. Every backend refuses such a name with
/// `invalidArgument` in `save`, `load`, `take`, `delete` and `metadata` (see `validate()`),
/// with one exception: a key that a backend returned from `listKeys` or `metadata` (a name
/// stored before this rule, or by another Secret Service client) stays usable as it is, so
/// such a credential can still be read, taken and deleted; no new one can be named.
public struct CredentialKey: Hashable, Sendable, CustomStringConvertible, Codable {
    /// The service the credential belongs to, for example `"api.example.com"`.
    public let service: String
    /// The account within the service, for example a user name or `"refresh_token"`.
    public let account: String
    /// A human-readable label. Backends that have labels (Secret Service) show it; when `nil`,
    /// they show `"<account> on <service>"`.
    public let label: String?
    /// Whether a backend read this name from its storage (`storedName()`): then the
    /// control-character rule does not apply, so that names stored before it stay reachable.
    package private(set) var isStoredName = false

    private enum CodingKeys: String, CodingKey {
        case service, account, label
    }

    /// Creates a key. Service and account must be non-empty, at most 4096 bytes, and contain
    /// no control character (checked by the backends, see `validate()`).
    public init(service: String, account: String, label: String? = nil) {
        self.service = service
        self.account = account
        self.label = label
    }

    /// This key, marked as read from a backend's storage (for the keys `listKeys` and
    /// `metadata` return).
    package func storedName() -> CredentialKey {
        var key = self
        key.isStoredName = true
        return key
    }

    /// The label a backend shows: `label` if set, else `"<account> on <service>"`.
    public var displayLabel: String { label ?? "\(account) on \(service)" }

    /// Names a credential; names are not secrets, values never appear here.
    public var description: String { "\(service)/\(account)" }

    /// Throws `invalidArgument` for an empty service or account, one longer than 4096 bytes, a
    /// control character (C0, DEL or C1) in either (unless a backend returned this key, see the
    /// type's documentation), or a NUL in the label (Secret Service attributes cannot carry it).
    /// The message never repeats the name.
    public func validate() throws(CredentialVaultError) {
        if service.isEmpty || account.isEmpty {
            throw .invalidArgument("service and account must not be empty")
        }
        if !isStoredName && (Self.hasControlCharacter(service) || Self.hasControlCharacter(account)) {
            throw .invalidArgument(
                "service and account must not contain control characters (U+0000-U+001F, U+007F-U+009F: tab, newline, escape, ...)")
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
