import CLibSecret

/// A Secret Service collection (`default` = the login keyring, or `session`), fetched fresh for
/// each operation so that its `Locked` property is current.
final class CollectionProxy {
    /// The collection proxy (owned).
    let pointer: UnsafeMutablePointer<SecretCollection>

    init(taking pointer: UnsafeMutablePointer<SecretCollection>) { self.pointer = pointer }

    deinit { g_object_unref(pointer) }

    /// Whether the collection is locked. Read from the proxy's properties: never prompts.
    /// libsecret answers a lookup on a locked collection with "nothing" and no error, so every
    /// operation checks this first.
    var isLocked: Bool { secret_collection_get_locked(pointer) != 0 }

    /// The collection's label (for example "Login").
    var label: String {
        guard let label = secret_collection_get_label(pointer) else { return "" }
        defer { g_free(label) }
        return String(cString: label)
    }

    /// The collection's D-Bus object path.
    var objectPath: String {
        let proxy = UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GDBusProxy.self)
        return g_dbus_proxy_get_object_path(proxy).map { String(cString: $0) } ?? ""
    }
}
