#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How the credentials systemd hands a service (files in `$CREDENTIALS_DIRECTORY`, one per
/// `LoadCredential=`, `LoadCredentialEncrypted=`, `SetCredential=` line, named by the line's ID)
/// map to service/account keys.
///
/// - A credential named in `names` is that key, and only that key (`names["db"] =
///   CredentialKey(service: "db.example.com", account: "app")`: `LoadCredential=db:...` is read
///   as `db.example.com/app`).
/// - Every other credential `NAME` is the key `service`/`NAME`: by default the application's
///   default service, so the string conveniences read credentials by their systemd name
///   (`try store.load(key: "api-token")` reads `$CREDENTIALS_DIRECTORY/api-token`).
/// - No other key exists in the store (a load gives `nil`). A systemd credential name is a file
///   name (non-empty, not `.` or `..`, no `/`, at most 255 bytes): an account that cannot be one
///   names no credential.
public struct SystemdCredentialNaming: Sendable, Hashable {
    /// The service of the credentials that `names` does not list.
    public var service: String
    /// Credential names mapped to keys of their own.
    public var names: [String: CredentialKey]

    /// A naming: `service` for unlisted credentials, `names` for the listed ones.
    public init(service: String = ApplicationIdentifier.credvault.defaultService, names: [String: CredentialKey] = [:]) {
        self.service = service
        self.names = names
    }

    /// The credential (file) name of `key`, `nil` when no credential can have that key. When
    /// `names` maps several names to one key, the first by bytes is that key's (the others are
    /// unreachable, and not listed). A name in `names` that is not a credential name
    /// (`isValidName`: `..`, `a/b`, ...) names nothing: it would lead out of the directory.
    public func credentialName(of key: CredentialKey) -> String? {
        let listed = names.filter { $0.value == key && Self.isValidName($0.key) }.map(\.key)
        if let first = listed.min(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) { return first }
        guard CredentialKey.sameName(key.service, service), Self.isValidName(key.account), names[key.account] == nil else { return nil }
        return key.account
    }

    /// The key of the credential `name` (a file name in the directory).
    public func key(of name: String) -> CredentialKey {
        names[name] ?? CredentialKey(service: service, account: name)
    }

    /// Whether `name` can be a systemd credential name (systemd's `credential_name_valid`: a
    /// valid file name of at most 255 bytes).
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && name.utf8.count <= 255 && !name.utf8.contains(UInt8(ascii: "/"))
            && !name.utf8.contains(0)
    }
}
