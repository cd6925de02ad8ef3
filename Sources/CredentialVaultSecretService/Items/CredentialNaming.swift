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

    /// Whether an item with these attributes is in this store's namespace: for an application,
    /// its identifier; for the unscoped store, none or the unscoped marker.
    func owns(_ attributes: [String: String]) -> Bool {
        let recorded = attributes[ItemAttribute.application]
        if let application { return recorded == application }
        return recorded == nil || recorded == ItemAttribute.unscoped
    }

    /// The key's items in this store's namespace (`Service.SearchItems`). A scoped store's
    /// search carries its attribute and matches nothing else. An unscoped one's search also
    /// matches applications' items: it searches for its marked items too, in the same round
    /// trip, and reads the attributes of the others only (items of other tools or of versions
    /// before identifiers, until a save marks them), to skip other namespaces' (see `owned`).
    func search(_ call: ServiceCall, _ key: CredentialKey) throws(CredentialVaultError) -> ServiceCall.Found {
        guard application == nil else { return try call.search(identity(of: key)) }
        var marked = identity(of: key)
        marked[ItemAttribute.application] = ItemAttribute.unscoped
        let (all, mine) = try call.search(identity(of: key), marked)
        return try owned(all, call, besides: Set(mine.unlocked))
    }

    /// `found` without the unlocked items of other namespaces. A scoped store searched with its
    /// attribute and has nothing to drop; an unscoped one reads the attributes of the unlocked
    /// items but `known` (paths known to be its own: one `Properties.GetAll` each), so that it
    /// never reads, replaces or deletes an application's item. Locked items are kept: they make
    /// the operation throw `locked` anyway.
    func owned(_ found: ServiceCall.Found, _ call: ServiceCall, besides known: Set<String> = []) throws(CredentialVaultError)
        -> ServiceCall.Found
    {
        guard application == nil else { return found }
        let candidates = found.unlocked.filter { !known.contains($0) }
        guard !candidates.isEmpty else { return found }
        let foreign = Set(try call.infos(candidates).filter { !owns($0.attributes) }.map(\.objectPath))
        guard !foreign.isEmpty else { return found }
        var result = found
        result.unlocked.removeAll { foreign.contains($0) }
        return result
    }

    /// The attributes of a new item: with the application's identifier (or the unscoped
    /// marker), which also keeps the daemon's replace within this namespace.
    func attributes(of key: CredentialKey, options: StorageOptions, expiresAt: Date?) -> [String: String] {
        var attributes = identity(of: key)
        attributes[ItemAttribute.application] = application ?? ItemAttribute.unscoped
        attributes[ItemAttribute.accessibility] =
            options.accessibility == .portable ? ItemAttribute.portable : ItemAttribute.deviceOnly
        if let expiresAt { attributes[ItemAttribute.expires] = ExpiryStamp.encode(expiresAt) }
        return attributes
    }

    /// The key an item stands for, or `nil` when it has no `service` and `username` attributes,
    /// its service is outside this store's prefix, or it is another namespace's. The label is kept only when it is not the
    /// default `"<account> on <service>"`.
    func key(of item: ItemInfo) -> CredentialKey? {
        guard owns(item.attributes), let stored = item.attributes[ItemAttribute.service],
            let account = item.attributes[ItemAttribute.account], stored.utf8.starts(with: prefix.utf8)
        else { return nil }
        // By bytes, like every comparison of names (`CredentialKey.sameName`).
        guard let service = String(validating: stored.utf8.dropFirst(prefix.utf8.count), as: UTF8.self),
            !service.isEmpty
        else { return nil }
        let plain = CredentialKey(service: service, account: account)
        let label = item.label.isEmpty || CredentialKey.sameName(item.label, plain.displayLabel) ? nil : item.label
        return CredentialKey(service: service, account: account, label: label)
    }
}

/// The expiry attribute of ephemeral items: milliseconds since 1970 (UTC) as decimal text.
enum ExpiryStamp {
    /// Encodes `date`.
    static func encode(_ date: Date) -> String {
        // Clamped, never a trap, whatever date a clock gives (TTLs are at most a year).
        let millis = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard millis.isFinite else { return "0" }
        return String(millis >= 0x1p62 ? Int64(1) << 62 : millis <= -0x1p62 ? -(Int64(1) << 62) : Int64(millis))
    }

    /// When a credential saved at `now` with `lifetime` expires: `nil` for a persistent one.
    static func expiry(of lifetime: Lifetime, savedAt now: Date) -> Date? {
        guard case .ephemeral(let ttl) = lifetime else { return nil }
        let (seconds, attoseconds) = ttl.components
        return now.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// Decodes a stamp; `nil` when it is not one.
    static func decode(_ text: String?) -> Date? {
        guard let text, let milliseconds = Int64(text) else { return nil }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
