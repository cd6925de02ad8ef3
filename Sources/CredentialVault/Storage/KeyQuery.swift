/// Which keys `listKeys(_:)` returns: those of one service, or of services and accounts that
/// start with given prefixes. Names compare as exact bytes (UTF-8), as everywhere in the
/// library: no Unicode normalisation, no case folding.
public struct KeyQuery: Sendable, Hashable {
    /// Only this service (exact), when given.
    public var service: String?
    /// Only services starting with this, when given.
    public var servicePrefix: String?
    /// Only accounts starting with this, when given.
    public var accountPrefix: String?

    /// A query; with no argument it matches every key.
    public init(service: String? = nil, servicePrefix: String? = nil, accountPrefix: String? = nil) {
        self.service = service
        self.servicePrefix = servicePrefix
        self.accountPrefix = accountPrefix
    }

    /// Whether `key` is one this query asks for.
    public func matches(_ key: CredentialKey) -> Bool {
        if let service, !key.service.utf8.elementsEqual(service.utf8) { return false }
        if let servicePrefix, !key.service.utf8.starts(with: servicePrefix.utf8) { return false }
        if let accountPrefix, !key.account.utf8.starts(with: accountPrefix.utf8) { return false }
        return true
    }
}
