import CLibSecret
import Synchronization

/// A strong reference to libsecret's `SecretService` proxy, and what this process remembers
/// about the service while the connection lasts (the collection paths behind the aliases).
final class ServiceHandle: @unchecked Sendable {
    // @unchecked: a GDBusProxy is thread-safe; libsecret's synchronous calls on one service from
    // several threads at once were measured clean under ThreadSanitizer. The alias cache is
    // behind a Mutex.

    /// The service proxy (owned).
    let pointer: UnsafeMutablePointer<SecretService>
    /// The D-Bus connection the proxy talks on (owned by the proxy).
    let bus: OpaquePointer
    /// The service's bus name (`org.freedesktop.secrets`).
    let busName: String

    /// How long a collection path read from an alias is trusted before `ReadAlias` is asked
    /// again (a collection that disappears is noticed at once, see `ServiceCall`; this bounds
    /// how long a process keeps writing to the old collection after the user points the
    /// `default` alias at another one).
    static let aliasLifetime: Duration = .seconds(30)

    /// Alias name to (collection path or nil when the alias is unset, when it was read).
    private let aliases = Mutex<[String: (path: String?, read: ContinuousClock.Instant)]>([:])

    init(taking pointer: UnsafeMutablePointer<SecretService>) {
        self.pointer = pointer
        let proxy = UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GDBusProxy.self)
        bus = g_dbus_proxy_get_connection(proxy)
        busName = g_dbus_proxy_get_name(proxy).map { String(cString: $0) } ?? "org.freedesktop.secrets"
    }

    /// The remembered path of `alias` (`.some(nil)`: the alias is unset), or `nil` when it must
    /// be read again.
    func cachedAlias(_ alias: String) -> String?? {
        aliases.withLock { cache in
            guard let entry = cache[alias], entry.read.duration(to: .now) < Self.aliasLifetime else { return nil }
            return .some(entry.path)
        }
    }

    /// Remembers the path of `alias`.
    func remember(alias: String, path: String?) {
        aliases.withLock { $0[alias] = (path, .now) }
    }

    /// Forgets every alias (a remembered collection turned out to be gone).
    func forgetAliases() {
        aliases.withLock { $0.removeAll() }
    }

    deinit { g_object_unref(pointer) }
}

/// The process's connection to the Secret Service: made once, with `secret_service_get_sync`,
/// and reused by every call of every store (reconnecting per call costs about 15 times more).
///
/// A failed connection is not remembered: the next operation tries again. A connection whose
/// daemon went away (restarted, or left the bus) is dropped so the next operation reconnects.
final class ServiceConnection: Sendable {
    /// The connection shared by every `SecretServiceStore` of the process.
    static let shared = ServiceConnection()

    private let held = Mutex<ServiceHandle?>(nil)

    private init() {}

    /// The connected service, connecting first if needed (within the caller's deadline).
    func service(cancellable: UnsafeMutablePointer<GCancellable>) throws(GLibError) -> ServiceHandle {
        if let handle = held.withLock({ $0 }) { return handle }
        // Not under the lock: a connection attempt that hangs must not make other threads wait
        // past their own deadlines. libsecret keeps one shared instance, so racing attempts
        // return the same object.
        let pointer = try withGError { secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, cancellable, $0) }
        guard let pointer else {
            throw GLibError(taking: g_error_new_literal(g_io_error_quark(), Int32(G_IO_ERROR_FAILED.rawValue), "no Secret Service"))
        }
        // g_bus_get()'s shared session-bus connection terminates the process when the bus goes
        // away; a credential store must report `notAvailable` instead.
        let proxy = UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GDBusProxy.self)
        if let bus = g_dbus_proxy_get_connection(proxy) { g_dbus_connection_set_exit_on_close(bus, 0) }
        let handle = ServiceHandle(taking: pointer)
        return held.withLock { current in
            if let current { return current }
            current = handle
            return handle
        }
    }

    /// Forgets `handle` (if it is still the current connection), so that the next operation
    /// connects again.
    func reset(ifStill handle: ServiceHandle) {
        held.withLock { current in
            guard current === handle else { return }
            current = nil
            secret_service_disconnect()
        }
    }
}
