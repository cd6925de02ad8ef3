import CLibSecret

/// The libsecret schema of the items this backend reads and writes.
///
/// It names the attributes of the convention shared with `secret-tool` and Python `keyring`
/// (`service`, `username`) plus this backend's own (see `ItemAttribute`). It carries
/// `SECRET_SCHEMA_DONT_MATCH_NAME`, so searches do not require an `xdg:schema` attribute: items
/// written by other tools, which have none or another one, are found too.
final class CredentialSchema: @unchecked Sendable {
    // @unchecked: the schema is built once and never mutated; libsecret only reads it.

    /// The schema name.
    static let name = "org.credentialvault.Credential"
    /// The schema shared by every store of the process.
    static let shared = CredentialSchema()

    /// The `SecretSchema` to pass to libsecret (never freed: it lives as long as the process).
    let pointer: UnsafeMutablePointer<SecretSchema>

    private init() {
        let types = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, nil)
        for name in ItemAttribute.all {
            // The table maps each attribute name to its type, stored as a pointer-sized integer
            // (GINT_TO_POINTER); every attribute here is a string.
            g_hash_table_insert(
                types, UnsafeMutableRawPointer(g_strdup(name)),
                UnsafeMutableRawPointer(bitPattern: Int(SECRET_SCHEMA_ATTRIBUTE_STRING.rawValue)))
        }
        pointer = secret_schema_newv(Self.name, SECRET_SCHEMA_DONT_MATCH_NAME, types)
        g_hash_table_unref(types)
    }
}
