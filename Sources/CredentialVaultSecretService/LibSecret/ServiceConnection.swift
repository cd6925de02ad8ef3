import CLibSecret
import Synchronization

/// A strong reference to a libsecret `SecretService` proxy with a session of its own, and what
/// this process remembers about the service while the connection lasts (which program serves
/// it, the collection paths behind the aliases).
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
    /// Which program serves it.
    let provider: SecretServiceProvider
    /// KWallet's own bus name (`org.kde.kwalletd5` or `org.kde.kwalletd6`), when it is KWallet.
    let kwalletName: String?

    /// How long a collection path read from an alias is trusted before `ReadAlias` is asked
    /// again (a collection that disappears is noticed at once, see `ServiceCall`; this bounds
    /// how long a process keeps writing to the old collection after the user points the
    /// `default` alias at another one).
    static let aliasLifetime: Duration = .seconds(30)

    /// Alias name to (collection path or nil when the alias is unset, when it was read).
    private let aliases = Mutex<[String: (path: String?, read: ContinuousClock.Instant)]>([:])

    init(taking pointer: UnsafeMutablePointer<SecretService>, provider: SecretServiceProvider, kwalletName: String?) {
        self.pointer = pointer
        self.provider = provider
        self.kwalletName = kwalletName
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

    /// Whether the service has a `session` collection (ephemeral credentials), as last read;
    /// `nil` when the alias was never read on this connection.
    var hasSessionCollection: Bool? {
        aliases.withLock { cache in cache[ServiceCall.Alias.session.rawValue].map { $0.path != nil } }
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

/// The process's connection to the Secret Service of one bus: made once, and reused by every
/// call of every store on that bus (reconnecting per call costs about 15 times more).
///
/// The proxy is the connection's own, not libsecret's process-wide `secret_service_get_sync`
/// one: it is made on the bus the configuration names (`SecretServiceConfiguration.busAddress`),
/// and dropping it (`reset`) gives the next operation a new session with the provider, which is
/// how a session whose key was negotiated wrongly (kwalletd5 before KWallet 6.25) is replaced.
///
/// A failed connection is not remembered: the next operation tries again. A connection whose
/// daemon went away (restarted, or left the bus) is dropped so the next operation reconnects.
final class ServiceConnection: Sendable {
    /// The connection of `address` (`nil`: the session bus), shared by every store of the process.
    static func on(_ address: String?) -> ServiceConnection {
        all.withLock { connections in
            let name = address ?? ""
            if let known = connections[name] { return known }
            let made = ServiceConnection(address: address)
            connections[name] = made
            return made
        }
    }

    private static let all = Mutex<[String: ServiceConnection]>([:])

    /// The bus's address; `nil` for the session bus.
    let address: String?
    private let held = Mutex<ServiceHandle?>(nil)

    private init(address: String?) { self.address = address }

    /// The connection made, if any (never connects).
    var current: ServiceHandle? { held.withLock { $0 } }

    /// The connected service, connecting first if needed (within the caller's deadline).
    func service(cancellable: UnsafeMutablePointer<GCancellable>) throws(GLibError) -> ServiceHandle {
        if let handle = current { return handle }
        // Not under the lock: a connection attempt that hangs must not make other threads wait
        // past their own deadlines. Racing attempts each make one; the first kept wins.
        let bus = try openBus(cancellable)
        defer { g_object_unref(UnsafeMutableRawPointer(bus)) }
        let busName = "org.freedesktop.secrets"
        var opened: UnsafeMutablePointer<SecretService>?
        do {
            opened = try withGError { credvault_secret_service_open(bus, busName, cancellable, $0) }
        } catch where error.isFailedSessionNegotiation {
            // kwalletd5 before 6.25 sometimes refuses the client's key ("Client public key size
            // is invalid", KDE bug 514194); a new session usually works.
            opened = try withGError { credvault_secret_service_open(bus, busName, cancellable, $0) }
        }
        guard let opened else {
            throw GLibError(taking: g_error_new_literal(g_io_error_quark(), Int32(G_IO_ERROR_FAILED.rawValue), "no Secret Service"))
        }
        let (provider, kwalletName) = ProviderIdentification.identify(on: bus, serviceName: busName, cancellable: cancellable)
        let handle = ServiceHandle(taking: opened, provider: provider, kwalletName: kwalletName)
        return held.withLock { current in
            if let current { return current }
            current = handle
            return handle
        }
    }

    /// A new reference to the bus: the process's shared session-bus connection, or a private
    /// connection to `address`.
    private func openBus(_ cancellable: UnsafeMutablePointer<GCancellable>) throws(GLibError) -> OpaquePointer {
        try Self.openBus(address: address, cancellable)
    }

    /// A new reference to a bus (owned: `g_object_unref` it): the process's shared session-bus
    /// connection when `address` is `nil`, else a private connection to `address`. Never exits
    /// the process when the bus goes away. Also the Secret portal's way to its bus.
    static func openBus(address: String?, _ cancellable: UnsafeMutablePointer<GCancellable>) throws(GLibError) -> OpaquePointer {
        let bus: OpaquePointer?
        if let address {
            let flags = GDBusConnectionFlags(
                rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
            bus = try withGError { g_dbus_connection_new_for_address_sync(address, flags, nil, cancellable, $0) }
        } else {
            bus = try withGError { g_bus_get_sync(G_BUS_TYPE_SESSION, cancellable, $0) }
        }
        guard let bus else {
            throw GLibError(taking: g_error_new_literal(g_io_error_quark(), Int32(G_IO_ERROR_FAILED.rawValue), "no D-Bus connection"))
        }
        // g_bus_get()'s shared session-bus connection terminates the process when the bus goes
        // away; a credential store must report `notAvailable` instead.
        g_dbus_connection_set_exit_on_close(bus, 0)
        return bus
    }

    /// Forgets `handle` (if it is still the current connection), so that the next operation
    /// connects again, with a new session.
    func reset(ifStill handle: ServiceHandle) {
        held.withLock { current in
            guard current === handle else { return }
            current = nil
        }
    }
}
