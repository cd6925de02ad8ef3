import CLibSecret

/// A Secret Service item with the properties libsecret loaded when it made the proxy.
final class ItemProxy {
    /// The item proxy (owned).
    let pointer: UnsafeMutablePointer<SecretItem>
    /// The item's D-Bus object path (its identity).
    let objectPath: String
    /// The item's attributes.
    let attributes: [String: String]
    /// The item's label.
    let label: String
    /// When the daemon created the item (seconds since 1970).
    let created: UInt64
    /// When the daemon last modified the item (seconds since 1970).
    let modified: UInt64

    init(taking pointer: UnsafeMutablePointer<SecretItem>) {
        self.pointer = pointer
        let proxy = UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GDBusProxy.self)
        objectPath = g_dbus_proxy_get_object_path(proxy).map { String(cString: $0) } ?? ""
        if let table = secret_item_get_attributes(pointer) {
            attributes = AttributeTable.read(table)
            g_hash_table_unref(table)
        } else {
            attributes = [:]
        }
        if let label = secret_item_get_label(pointer) {
            self.label = String(cString: label)
            g_free(label)
        } else {
            self.label = ""
        }
        created = UInt64(secret_item_get_created(pointer))
        modified = UInt64(secret_item_get_modified(pointer))
    }

    deinit { g_object_unref(pointer) }

    /// A total order on items, the same in every process: by modification time, then creation
    /// time, then the number the daemon put at the end of the object path (it grows with each
    /// new item), then the path. The greatest is the current value of a key that has several items.
    var order: ItemOrder {
        let last = objectPath.split(separator: "/").last.map(String.init) ?? ""
        return ItemOrder(modified: modified, created: created, serial: UInt64(last) ?? 0, path: objectPath)
    }
}

/// See `ItemProxy.order`.
struct ItemOrder: Comparable {
    var modified: UInt64
    var created: UInt64
    var serial: UInt64
    var path: String

    static func < (lhs: ItemOrder, rhs: ItemOrder) -> Bool {
        (lhs.modified, lhs.created, lhs.serial) < (rhs.modified, rhs.created, rhs.serial)
            || ((lhs.modified, lhs.created, lhs.serial) == (rhs.modified, rhs.created, rhs.serial) && lhs.path < rhs.path)
    }
}
