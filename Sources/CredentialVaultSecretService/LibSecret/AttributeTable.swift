import CLibSecret

/// Secret Service attributes (string to string) as the `GHashTable` libsecret's `v` functions take.
final class AttributeTable {
    /// The table (owned; keys and values are `g_strdup` copies freed by the table).
    let table: OpaquePointer

    /// Builds a table holding copies of `attributes`.
    init(_ attributes: [String: String]) {
        table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)
        for (name, value) in attributes {
            g_hash_table_insert(table, UnsafeMutableRawPointer(g_strdup(name)), UnsafeMutableRawPointer(g_strdup(value)))
        }
    }

    deinit { g_hash_table_unref(table) }

    /// Reads a string-to-string `GHashTable` (as `secret_item_get_attributes` returns) into a
    /// dictionary. Does not take ownership.
    static func read(_ table: OpaquePointer) -> [String: String] {
        var result: [String: String] = [:]
        var iterator = GHashTableIter()
        g_hash_table_iter_init(&iterator, table)
        var key: gpointer?
        var value: gpointer?
        while g_hash_table_iter_next(&iterator, &key, &value) != 0 {
            guard let key, let value else { continue }
            result[String(cString: key.assumingMemoryBound(to: CChar.self))] =
                String(cString: value.assumingMemoryBound(to: CChar.self))
        }
        return result
    }
}
