/// The attribute names of a Secret Service item as this backend writes them.
enum ItemAttribute {
    /// The service, as `secret-tool` and Python `keyring` name it.
    static let service = "service"
    /// The account, as `secret-tool` and Python `keyring` name it.
    static let account = "username"
    /// `device-only` or `portable`. Items written by other tools have none: they count as
    /// device-only (the keyring is local to this machine).
    static let accessibility = "credential-vault:accessibility"
    /// For ephemeral items: when they expire, in milliseconds since 1970 (UTC), as decimal text.
    static let expires = "credential-vault:expires"

    /// The application identifier of a scoped store's items (`ApplicationIdentifier`). The
    /// unscoped namespace writes `unscoped` there (so that the daemon's replace never matches an
    /// application's item); items of other tools and of older versions have none.
    static let application = "credential-vault:application"

    /// Every attribute of the schema.
    static let all = [service, account, accessibility, expires, application]

    /// The value of `accessibility` for a device-only item.
    static let deviceOnly = "device-only"
    /// The value of `application` on the items an unscoped store writes (the name of
    /// `ApplicationIdentifier.credvault`, which no reverse-DNS identifier can be).
    static let unscoped = "credential-vault"
    /// The value of `accessibility` for a portable item.
    static let portable = "portable"
}
