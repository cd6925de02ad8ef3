import CLibSecret
import CredentialVault
import Foundation

/// One public operation's access to the Secret Service: the shared connection, the operation's
/// deadline (one `GCancellable` for every D-Bus round trip it makes) and the mapping of glib
/// errors to `CredentialVaultError`. Used on one thread, for one operation.
///
/// Everything here works on object paths, one D-Bus round trip per call, on the held
/// connection: no `GDBusProxy` is made per collection or item (see `PathCalls`).
final class ServiceCall {
    /// The well-known collection aliases.
    enum Alias: String {
        /// The user's main collection (gnome-keyring's "login" keyring), where `secret-tool` and
        /// Python `keyring` store.
        case `default`
        /// The collection kept in the daemon's memory only, gone at logout.
        case session
    }

    /// The result of `Service.SearchItems`: matching item paths, split by lock state.
    struct Found {
        var unlocked: [String] = []
        var locked: [String] = []

        /// The paths of items in the collection at `collection` (`nil`: none).
        func unlocked(in collection: String?) -> [String] { collection.map { c in unlocked.filter { Self.isItem($0, of: c) } } ?? [] }
        func locked(in collection: String?) -> [String] { collection.map { c in locked.filter { Self.isItem($0, of: c) } } ?? [] }

        /// Item paths are `<collection path>/<item>` (Secret Service API: object paths).
        static func isItem(_ item: String, of collection: String) -> Bool {
            item.count > collection.count + 1 && item.hasPrefix(collection) && item.utf8.dropFirst(collection.utf8.count).first == UInt8(ascii: "/")
        }
    }

    let deadline: Deadline
    let service: ServiceHandle
    private let connection: ServiceConnection
    let paths: PathCalls
    /// Set when a remembered alias path named a collection that is gone: the operation is then
    /// run once more with freshly read aliases (`SecretServiceStore.perform`).
    private(set) var foundStaleAlias = false

    /// Connects (or reuses the connection) within `deadline`.
    init(connection: ServiceConnection, deadline: Deadline) throws(CredentialVaultError) {
        self.connection = connection
        self.deadline = deadline
        guard let paths = PathCalls.shared else {
            throw .unsupported("this libsecret lacks the object-path functions (secret-paths.h) this backend uses")
        }
        self.paths = paths
        do {
            service = try connection.service(cancellable: deadline.cancellable)
        } catch {
            throw error.vaultError(deadlineExpired: deadline.hasExpired)
        }
    }

    /// The vault error for `error`; drops the connection when it is no use any more.
    func fail(_ error: GLibError) -> CredentialVaultError {
        if error.invalidatesConnection { connection.reset(ifStill: service) }
        return error.vaultError(deadlineExpired: deadline.hasExpired)
    }

    /// The error for a remembered collection that turned out to be gone: the aliases are read
    /// again and the operation retried once.
    func staleAlias() -> CredentialVaultError {
        foundStaleAlias = true
        service.forgetAliases()
        return .io("the Secret Service collection behind an alias disappeared")
    }

    // MARK: - Collections

    /// The path of the collection behind `alias`, or `nil` when the service has none.
    /// Remembered on the connection (`ServiceHandle.aliasLifetime`).
    func collectionPath(_ alias: Alias) throws(CredentialVaultError) -> String? {
        if let cached = service.cachedAlias(alias.rawValue) { return cached }
        let read: UnsafeMutablePointer<gchar>?
        do {
            read = try withGError { paths.readAlias(service.pointer, alias.rawValue, deadline.cancellable, $0) }
        } catch {
            throw fail(error)
        }
        var path = read.map { String(cString: $0) }
        g_free(read)
        if path == "/" { path = nil }
        service.remember(alias: alias.rawValue, path: path)
        return path
    }

    /// The collection behind `alias` as a libsecret proxy (for the unlock prompt), or `nil`.
    func collection(_ alias: Alias) throws(CredentialVaultError) -> CollectionProxy? {
        do {
            let pointer = try withGError {
                secret_collection_for_alias_sync(service.pointer, alias.rawValue, SECRET_COLLECTION_NONE, deadline.cancellable, $0)
            }
            return pointer.map { CollectionProxy(taking: $0) }
        } catch {
            throw fail(error)
        }
    }

    /// Whether the collection at `path` is locked, asked now (`Properties.Get`, never prompts).
    func isLocked(collection path: String) throws(CredentialVaultError) -> Bool {
        guard let value = try property(path, interface: "org.freedesktop.Secret.Collection", name: "Locked") else {
            throw staleAlias()
        }
        defer { g_variant_unref(value) }
        guard String(cString: g_variant_get_type_string(value)) == "b" else {
            throw .io("the Secret Service answered something unexpected (Locked is not a boolean)")
        }
        return g_variant_get_boolean(value) != 0
    }

    /// Throws `locked` when the collection at `path` is locked.
    func requireUnlocked(_ path: String?) throws(CredentialVaultError) {
        if let path, try isLocked(collection: path) { throw .locked }
    }

    /// The label and lock state of the collection at `path`.
    func collectionInfo(_ path: String) throws(CredentialVaultError) -> (label: String, isLocked: Bool) {
        var label = ""
        var locked: Bool?
        let found = try properties(path, interface: "org.freedesktop.Secret.Collection") { name, value in
            switch name {
            case "Label": label = GVariantReading.string(value) ?? ""
            case "Locked" where String(cString: g_variant_get_type_string(value)) == "b": locked = g_variant_get_boolean(value) != 0
            default: break
            }
        }
        guard found else { throw staleAlias() }
        guard let locked else { throw .io("the Secret Service answered something unexpected (no Locked property)") }
        return (label, locked)
    }

    // MARK: - Items

    /// `Service.SearchItems`: the items of every collection whose attributes include
    /// `attributes` (all items for an empty table), unlocked and locked ones apart. Never
    /// unlocks anything and never loads secrets.
    func search(_ attributes: [String: String]) throws(CredentialVaultError) -> Found {
        let table = AttributeTable(attributes)
        // libsecret refuses a schema search without attributes; without a schema it matches every item.
        let schema = attributes.isEmpty ? nil : UnsafePointer(CredentialSchema.shared.pointer)
        var unlocked: PathCalls.PathList?
        var locked: PathCalls.PathList?
        defer {
            g_strfreev(unlocked)
            g_strfreev(locked)
        }
        do {
            _ = try withGError { paths.search(service.pointer, schema, table.table, deadline.cancellable, &unlocked, &locked, $0) }
        } catch {
            throw fail(error)
        }
        return Found(unlocked: Self.strings(unlocked), locked: Self.strings(locked))
    }

    /// The attributes, label and times of the item at `path` (`Properties.GetAll`); `nil` when
    /// the item was deleted meanwhile.
    func info(_ path: String) throws(CredentialVaultError) -> ItemInfo? {
        var attributes: [String: String] = [:]
        var label = ""
        var created: UInt64 = 0
        var modified: UInt64 = 0
        let found = try properties(path, interface: "org.freedesktop.Secret.Item") { name, value in
            let type = String(cString: g_variant_get_type_string(value))
            switch (name, type) {
            case ("Attributes", _): attributes = GVariantReading.stringDictionary(value)
            case ("Label", _): label = GVariantReading.string(value) ?? ""
            case ("Created", "t"): created = UInt64(g_variant_get_uint64(value))
            case ("Modified", "t"): modified = UInt64(g_variant_get_uint64(value))
            default: break
            }
        }
        return found ? ItemInfo(objectPath: path, attributes: attributes, label: label, created: created, modified: modified) : nil
    }

    /// `Collection.SearchItems` on the collection at `collection`: its matching items, locked or
    /// not. `nil` when the collection is gone.
    func search(in collection: String, _ attributes: [String: String]) throws(CredentialVaultError) -> [String]? {
        let arguments = GVariantReading.makeStringDictionary(attributes)
        var children: [OpaquePointer?] = [arguments]
        let parameters = children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 1) }
        let reply: OpaquePointer?
        do {
            reply = try withGError {
                g_dbus_connection_call_sync(
                    service.bus, service.busName, collection, "org.freedesktop.Secret.Collection", "SearchItems",
                    parameters, nil, G_DBUS_CALL_FLAGS_NONE, -1, deadline.cancellable, $0)
            }
        } catch {
            if error.isNoSuchObject { return nil }
            throw fail(error)
        }
        guard let reply else { return nil }
        defer { g_variant_unref(reply) }
        return GVariantReading.strings(reply, child: 0)
    }

    /// The infos of the items at `paths` that still exist.
    func infos(_ paths: [String]) throws(CredentialVaultError) -> [ItemInfo] {
        var result: [ItemInfo] = []
        for path in paths {
            if let info = try info(path) { result.append(info) }
        }
        return result
    }

    /// `Collection.CreateItem` in the collection at `collection`, always a new item (a replacing
    /// save is `searchAndReplace`); returns the item's path.
    func createItem(
        in collection: String, attributes: [String: String], label: String, value: Data
    ) throws(CredentialVaultError) -> String {
        let attributes = Self.withSchema(attributes)
        let properties = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, { g_variant_unref(OpaquePointer($0)) })!
        defer { g_hash_table_unref(properties) }
        for (name, variant) in [
            ("org.freedesktop.Secret.Item.Label", g_variant_new_string(label)),
            ("org.freedesktop.Secret.Item.Attributes", GVariantReading.makeStringDictionary(attributes)),
        ] {
            g_hash_table_insert(properties, UnsafeMutableRawPointer(g_strdup(name)), UnsafeMutableRawPointer(g_variant_ref_sink(variant)))
        }
        let secret = SecretValueBridge.makeValue(value)
        defer { secret_value_unref(UnsafeMutableRawPointer(secret)) }
        let created: UnsafeMutablePointer<gchar>?
        do {
            created = try withGError {
                paths.createItem(
                    service.pointer, collection, properties, secret, SECRET_ITEM_CREATE_NONE,
                    deadline.cancellable, $0)
            }
        } catch {
            if error.isNoSuchObject { throw staleAlias() }
            throw fail(error)
        }
        guard let created else { throw .io("the Secret Service did not return the item it created") }
        defer { g_free(created) }
        return String(cString: created)
    }

    /// `attributes` plus what libsecret's schema-based create records (`xdg:schema`), so that
    /// secret-tool shows the schema.
    static func withSchema(_ attributes: [String: String]) -> [String: String] {
        var attributes = attributes
        attributes["xdg:schema"] = CredentialSchema.name
        return attributes
    }

    /// Deletes the item at `path`; `false` when it was already gone (deleted by someone else meanwhile).
    func delete(_ path: String) throws(CredentialVaultError) -> Bool {
        do {
            return try withGError { paths.deleteItem(service.pointer, path, deadline.cancellable, $0) } != 0
        } catch {
            if error.isNoSuchObject { return false }
            throw fail(error)
        }
    }

    /// The values of the items at `itemPaths` (`Service.GetSecrets`, one round trip). Items
    /// that are gone or locked are missing from the result.
    func secrets(_ itemPaths: [String]) throws(CredentialVaultError) -> [String: Data] {
        guard !itemPaths.isEmpty else { return [:] }
        let copies = itemPaths.map { UnsafePointer(g_strdup($0)) }
        defer { for copy in copies { g_free(UnsafeMutableRawPointer(mutating: copy)) } }
        var list: [UnsafePointer<gchar>?] = copies + [nil]
        let table: OpaquePointer?
        do {
            table = try list.withUnsafeMutableBufferPointer { buffer throws(GLibError) in
                try withGError { paths.getSecrets(service.pointer, buffer.baseAddress, deadline.cancellable, $0) }
            }
        } catch {
            if error.isNoSuchObject { return [:] }
            throw fail(error)
        }
        guard let table else { return [:] }
        defer { g_hash_table_unref(table) }
        var result: [String: Data] = [:]
        for path in itemPaths {
            guard let value = path.withCString({ g_hash_table_lookup(table, $0) }) else { continue }
            result[path] = SecretValueBridge.bytes(of: OpaquePointer(value))
        }
        return result
    }

    // MARK: - D-Bus properties

    /// `Properties.Get`; `nil` when the object does not exist. The result is owned by the caller.
    private func property(_ path: String, interface: String, name: String) throws(CredentialVaultError) -> OpaquePointer? {
        guard let reply = try callProperties(path, method: "Get", [interface, name]) else { return nil }
        defer { g_variant_unref(reply) }
        guard g_variant_n_children(reply) == 1, let boxed = g_variant_get_child_value(reply, 0) else {
            throw .io("the Secret Service answered something unexpected (Properties.Get)")
        }
        defer { g_variant_unref(boxed) }
        return g_variant_get_variant(boxed)
    }

    /// `Properties.GetAll`, each property given to `body`; `false` when the object does not exist.
    private func properties(
        _ path: String, interface: String, _ body: (String, OpaquePointer) -> Void
    ) throws(CredentialVaultError) -> Bool {
        guard let reply = try callProperties(path, method: "GetAll", [interface]) else { return false }
        defer { g_variant_unref(reply) }
        guard g_variant_n_children(reply) == 1, let dictionary = g_variant_get_child_value(reply, 0) else {
            throw .io("the Secret Service answered something unexpected (Properties.GetAll)")
        }
        defer { g_variant_unref(dictionary) }
        GVariantReading.forEachEntry(dictionary, body)
        return true
    }

    private func callProperties(_ path: String, method: String, _ arguments: [String]) throws(CredentialVaultError) -> OpaquePointer? {
        do {
            return try withGError {
                g_dbus_connection_call_sync(
                    service.bus, service.busName, path, "org.freedesktop.DBus.Properties", method,
                    GVariantReading.makeStringTuple(arguments), nil, G_DBUS_CALL_FLAGS_NONE, -1,
                    deadline.cancellable, $0)
            }
        } catch {
            if error.isNoSuchObject { return nil }
            throw fail(error)
        }
    }

    private static func strings(_ list: PathCalls.PathList?) -> [String] {
        guard let list else { return [] }
        var result: [String] = []
        var index = 0
        while let entry = list[index] {
            result.append(String(cString: entry))
            index += 1
        }
        return result
    }
}
