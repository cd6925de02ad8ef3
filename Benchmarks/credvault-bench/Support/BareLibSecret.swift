import CLibSecret
import Foundation

/// The bare libsecret calls the Secret Service backend is compared with: one connection made
/// up front and held (`secret_service_get_sync`), then `secret_service_store_sync` (an item
/// replaced in place by its attributes) and `secret_service_lookup_sync`, with the `service` +
/// `username` attributes that secret-tool and Python keyring use, values as bytes.
final class BareLibSecret {
    private let service: UnsafeMutablePointer<SecretService>
    private let schema: UnsafeMutablePointer<SecretSchema>

    init() throws {
        var error: UnsafeMutablePointer<GError>?
        guard let connected = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, nil, &error) else {
            throw Self.failure("connect", error)
        }
        service = connected
        let types = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, nil)
        for name in ["service", "username"] {
            g_hash_table_insert(
                types, UnsafeMutableRawPointer(g_strdup(name)),
                UnsafeMutableRawPointer(bitPattern: Int(SECRET_SCHEMA_ATTRIBUTE_STRING.rawValue)))
        }
        schema = secret_schema_newv("org.credentialvault.BenchBare", SECRET_SCHEMA_DONT_MATCH_NAME, types)
        g_hash_table_unref(types)
    }

    deinit {
        secret_schema_unref(schema)
        g_object_unref(service)
    }

    /// Stores `value` in the default collection, replacing the item with the same attributes.
    func store(_ value: Data, service name: String, account: String) throws {
        let attributes = Self.attributes(name, account)
        defer { g_hash_table_unref(attributes) }
        let secret = value.withUnsafeBytes { raw in
            secret_value_new(raw.baseAddress!.assumingMemoryBound(to: CChar.self), raw.count, "application/octet-stream")
        }
        defer { secret_value_unref(UnsafeMutableRawPointer(secret)) }
        var error: UnsafeMutablePointer<GError>?
        guard secret_service_store_sync(service, schema, attributes, "default", "\(account) on \(name)", secret, nil, &error) != 0 else {
            throw Self.failure("store", error)
        }
    }

    /// The value stored under the attributes, or `nil`.
    func lookup(service name: String, account: String) throws -> Data? {
        let attributes = Self.attributes(name, account)
        defer { g_hash_table_unref(attributes) }
        var error: UnsafeMutablePointer<GError>?
        guard let value = secret_service_lookup_sync(service, schema, attributes, nil, &error) else {
            if error != nil { throw Self.failure("lookup", error) }
            return nil
        }
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        var length: gsize = 0
        guard let bytes = secret_value_get(value, &length) else { return Data() }
        return Data(bytes: bytes, count: Int(length))
    }

    private static func attributes(_ service: String, _ account: String) -> OpaquePointer {
        let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)!
        for (name, value) in [("service", service), ("username", account)] {
            g_hash_table_insert(table, UnsafeMutableRawPointer(g_strdup(name)), UnsafeMutableRawPointer(g_strdup(value)))
        }
        return table
    }

    private static func failure(_ what: String, _ error: UnsafeMutablePointer<GError>?) -> BenchError {
        defer { if let error { g_error_free(error) } }
        let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
        return BenchError("libsecret \(what) failed: \(message)")
    }
}
