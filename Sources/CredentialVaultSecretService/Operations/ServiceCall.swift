import CLibSecret
import CredentialVault
import Foundation

/// One public operation's access to the Secret Service: the shared connection, the operation's
/// deadline (one `GCancellable` for every D-Bus round trip it makes) and the mapping of glib
/// errors to `CredentialVaultError`. Used on one thread, for one operation.
struct ServiceCall {
    /// The well-known collection aliases.
    enum Alias: String {
        /// The user's main collection (gnome-keyring's "login" keyring), where `secret-tool` and
        /// Python `keyring` store.
        case `default`
        /// The collection kept in the daemon's memory only, gone at logout.
        case session
    }

    let deadline: Deadline
    let service: ServiceHandle
    private let connection: ServiceConnection

    /// Connects (or reuses the connection) within `deadline`.
    init(connection: ServiceConnection, deadline: Deadline) throws(CredentialVaultError) {
        self.connection = connection
        self.deadline = deadline
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

    /// The collection behind `alias`, or `nil` when the service has none. Never unlocks it.
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

    /// The items of `collection` whose attributes include `attributes` (all items for an empty
    /// table), locked or not. Never unlocks anything and never loads secrets.
    ///
    /// Searches for object paths first and then makes one proxy per item, skipping items that
    /// another client deletes in between (libsecret's own search fails as a whole then, which
    /// on a busy keyring happens to nearly every search over many items).
    func search(_ collection: CollectionProxy, attributes: [String: String]) throws(CredentialVaultError) -> [ItemProxy] {
        let table = AttributeTable(attributes)
        // libsecret refuses a schema search without attributes; without a schema it matches every item.
        let schema = attributes.isEmpty ? nil : CredentialSchema.shared.pointer
        let paths: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        do {
            paths = try withGError {
                secret_collection_search_for_dbus_paths_sync(collection.pointer, schema, table.table, deadline.cancellable, $0)
            }
        } catch {
            throw fail(error)
        }
        guard let paths else { return [] }
        defer { g_strfreev(paths) }
        var items: [ItemProxy] = []
        var index = 0
        while let path = paths[index] {
            index += 1
            do {
                let item = try withGError {
                    secret_item_new_for_dbus_path_sync(service.pointer, path, SECRET_ITEM_NONE, deadline.cancellable, $0)
                }
                if let item { items.append(ItemProxy(taking: item)) }
            } catch {
                if error.isNoSuchObject { continue }  // deleted meanwhile
                throw fail(error)
            }
        }
        return items
    }

    /// Creates a new item (never replacing one: see `SecretServiceStore.save`). `nil` when the
    /// daemon created it but it was deleted before libsecret could read it back: a concurrent
    /// save of the same key replaced it (or a concurrent delete removed it), which is what this
    /// save's caller would have seen a moment later anyway.
    func createItem(
        in collection: CollectionProxy, attributes: [String: String], label: String, value: Data
    ) throws(CredentialVaultError) -> ItemProxy? {
        let table = AttributeTable(attributes)
        let secret = SecretValueBridge.makeValue(value)
        defer { secret_value_unref(UnsafeMutableRawPointer(secret)) }
        let item: UnsafeMutablePointer<SecretItem>?
        do {
            item = try withGError {
                secret_item_create_sync(
                    collection.pointer, CredentialSchema.shared.pointer, table.table, label, secret,
                    SECRET_ITEM_CREATE_NONE, deadline.cancellable, $0)
            }
        } catch {
            // "No such object" also when the collection itself is gone: only an item can vanish here.
            if error.isNoSuchObject, try self.collection(at: collection.objectPath) { return nil }
            throw fail(error)
        }
        guard let item else { throw .io("the Secret Service did not return the item it created") }
        return ItemProxy(taking: item)
    }

    /// Whether the collection at `path` still exists.
    private func collection(at path: String) throws(CredentialVaultError) -> Bool {
        do {
            let pointer = try withGError {
                secret_collection_new_for_dbus_path_sync(service.pointer, path, SECRET_COLLECTION_NONE, deadline.cancellable, $0)
            }
            if let pointer { g_object_unref(pointer) }
            return pointer != nil
        } catch {
            if error.isNoSuchObject { return false }
            throw fail(error)
        }
    }

    /// Deletes `item`; `false` when it was already gone (deleted by someone else meanwhile).
    func delete(_ item: ItemProxy) throws(CredentialVaultError) -> Bool {
        do {
            return try withGError { secret_item_delete_sync(item.pointer, deadline.cancellable, $0) } != 0
        } catch {
            if error.isNoSuchObject { return false }
            throw fail(error)
        }
    }

    /// Reads the value of `item`; `nil` when the item was deleted meanwhile.
    func secret(of item: ItemProxy) throws(CredentialVaultError) -> Data? {
        do {
            _ = try withGError { secret_item_load_secret_sync(item.pointer, deadline.cancellable, $0) }
        } catch {
            if error.isNoSuchObject { return nil }
            throw fail(error)
        }
        // NULL after a successful load means the item is locked (its collection was locked meanwhile).
        guard let value = secret_item_get_secret(item.pointer) else { throw .locked }
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        return SecretValueBridge.bytes(of: value)
    }
}
