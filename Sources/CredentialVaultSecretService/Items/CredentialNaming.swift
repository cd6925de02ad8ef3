import CredentialVault
import Foundation

/// How a store's credential keys map to item attributes and back, under its service-name prefix
/// and in its application's namespace.
struct CredentialNaming {
    /// Put in front of every service name (empty: none).
    let prefix: String
    /// The `credential-vault:application` attribute of every item this store writes and
    /// searches for (`nil`: unscoped, none written, none searched).
    let application: String?

    /// The `service` attribute of `key`.
    func storedService(_ service: String) -> String { prefix + service }

    /// The attributes that identify `key` (what `secret-tool` and Python `keyring` search with).
    /// With an application, its attribute too: the daemon then matches only that application's
    /// items, in searches and in a replacing create alike.
    func identity(of key: CredentialKey) -> [String: String] {
        var attributes = scope(service: key.service)
        attributes[ItemAttribute.account] = key.account
        return attributes
    }

    /// The attributes to search with for every credential of this store (of one service when given).
    func scope(service: String?) -> [String: String] {
        var attributes: [String: String] = [:]
        if let service { attributes[ItemAttribute.service] = storedService(service) }
        if let application { attributes[ItemAttribute.application] = application }
        return attributes
    }

    /// The attributes of a new item.
    func attributes(of key: CredentialKey, options: StorageOptions, expiresAt: Date?) -> [String: String] {
        var attributes = identity(of: key)
        attributes[ItemAttribute.accessibility] =
            options.accessibility == .portable ? ItemAttribute.portable : ItemAttribute.deviceOnly
        if let expiresAt { attributes[ItemAttribute.expires] = ExpiryStamp.encode(expiresAt) }
        return attributes
    }

    /// The key an item stands for, or `nil` when it has no `service` and `username` attributes or
    /// its service is outside this store's prefix. The label is kept only when it is not the
    /// default `"<account> on <service>"`.
    func key(of item: ItemInfo) -> CredentialKey? {
        guard let stored = item.attributes[ItemAttribute.service], let account = item.attributes[ItemAttribute.account],
            stored.utf8.starts(with: prefix.utf8)
        else { return nil }
        // By bytes, like every comparison of names (`CredentialKey.sameName`).
        guard let service = String(validating: stored.utf8.dropFirst(prefix.utf8.count), as: UTF8.self),
            !service.isEmpty, !account.isEmpty
        else { return nil }
        let plain = CredentialKey(service: service, account: account)
        let label = item.label.isEmpty || CredentialKey.sameName(item.label, plain.displayLabel) ? nil : item.label
        // Read from the keyring: usable as it is, even with a control character another client put in.
        return CredentialKey(service: service, account: account, label: label).storedName()
    }
}

/// The expiry attribute of ephemeral items: milliseconds since 1970 (UTC) as decimal text.
enum ExpiryStamp {
    /// Encodes `date`.
    static func encode(_ date: Date) -> String {
        String(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// Decodes a stamp; `nil` when it is not one.
    static func decode(_ text: String?) -> Date? {
        guard let text, let milliseconds = Int64(text) else { return nil }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
