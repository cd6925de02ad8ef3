import CLibSecret
import Foundation
import Synchronization

/// A stub of the Secret portal's frontend, for the faults the real one cannot be made to show
/// (a wrong length, response 1 or 2, an answer that never comes, another version). It serves
/// `org.freedesktop.portal.Secret` at `/org/freedesktop/portal/desktop` on a connection of its
/// own to the test bus, under its unique name (the client is pointed at it), from a thread of
/// its own. It does what the real frontend does otherwise: answers `RetrieveSecret` with the
/// request's path (from the caller's unique name and `handle_token`), writes into the fd and
/// closes it, then emits `Response` from that path; and it records `Request.Close`.
final class StubSecretPortal: @unchecked Sendable {
    // @unchecked: the glib objects are touched on the stub's thread only (after start), the
    // shared state is behind a Mutex.

    enum Behaviour: Sendable {
        /// Writes `bytes` bytes into the pipe, closes it, then answers `response`.
        case answer(response: UInt32, bytes: Int)
        /// Never answers; keeps the pipe open.
        case never
        /// Writes 64 bytes, closes the pipe, then emits a `Response` whose body is `(s)`, not `(ua{sv})`.
        case malformedResponse
    }

    struct Record {
        var retrieveCalls = 0
        var closedPaths: [String] = []
        var requestPaths: [String] = []
    }

    let behaviour: Behaviour
    let version: UInt32
    /// What the stub wrote (the bytes a successful client must have read).
    static func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) } }

    private let record = Mutex(Record())
    private let ready = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(true)
    private var context: OpaquePointer?
    private var connection: OpaquePointer?
    private var keptFDs: [Int32] = []
    private(set) var uniqueName = ""
    private var thread: Thread?

    var recorded: Record { record.withLock { $0 } }

    init(behaviour: Behaviour, version: UInt32 = 1) throws {
        self.behaviour = behaviour
        self.version = version
        guard let address = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] else { throw StubError.noBus }
        let thread = Thread { [self] in self.serve(address) }
        thread.name = "stub-secret-portal"
        self.thread = thread
        thread.start()
        guard ready.wait(timeout: .now() + 30) == .success, !uniqueName.isEmpty else { throw StubError.notStarted }
    }

    enum StubError: Error { case noBus, notStarted }

    /// Stops the thread and releases the connection (and the pipes it kept open).
    func stop() {
        running.store(false, ordering: .releasing)
        if let context { g_main_context_wakeup(context) }
        while thread?.isFinished == false { usleep(1000) }
        // The thread's closure holds the stub: dropping the thread breaks that cycle (LeakSanitizer).
        thread = nil
    }

    /// Emits a `Response` (`code`, no results) from this stub's connection on `path`, to the
    /// connection whose request it is (its unique name, from the path): what an impostor on
    /// the bus can send.
    func emitResponse(_ code: UInt32, path: String) {
        guard let connection, let element = path.split(separator: "/").dropLast().last else { return }
        let destination = ":" + element.replacingOccurrences(of: "_", with: ".")
        let entry = g_variant_type_new("{sv}")  // not g_variant_type_checked_: its string would be a freed temporary
        defer { g_variant_type_free(entry) }
        let results = g_variant_new_array(entry, nil, 0)
        var children: [OpaquePointer?] = [g_variant_new_uint32(code), results]
        let body = children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 2) }
        _ = g_dbus_connection_emit_signal(connection, destination, path, "org.freedesktop.portal.Request", "Response", body, nil)
        _ = g_dbus_connection_flush_sync(connection, nil, nil)
    }

    private static let xml = """
        <node>
          <interface name="org.freedesktop.portal.Secret">
            <method name="RetrieveSecret">
              <arg type="h" name="fd" direction="in"/><arg type="a{sv}" name="options" direction="in"/>
              <arg type="o" name="handle" direction="out"/>
            </method>
            <property name="version" type="u" access="read"/>
          </interface>
          <interface name="org.freedesktop.portal.Request">
            <method name="Close"/>
          </interface>
        </node>
        """

    private func serve(_ address: String) {
        let context = g_main_context_new()
        self.context = context
        g_main_context_push_thread_default(context)
        defer {
            for fd in keptFDs { close(fd) }
            if let connection { g_object_unref(UnsafeMutableRawPointer(connection)) }
            g_main_context_pop_thread_default(context)
            g_main_context_unref(context)
        }
        let flags = GDBusConnectionFlags(
            rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, nil) else {
            ready.signal()
            return
        }
        self.connection = connection
        let node = g_dbus_node_info_new_for_xml(Self.xml, nil)!
        defer { g_dbus_node_info_unref(node) }
        var vtable = GDBusInterfaceVTable()
        vtable.method_call = { connection, sender, path, interface, method, parameters, invocation, data in
            let stub = Unmanaged<StubSecretPortal>.fromOpaque(data!).takeUnretainedValue()
            stub.handle(
                connection!, sender: String(cString: sender!), path: String(cString: path!), method: String(cString: method!),
                parameters: parameters!, invocation: invocation!)
        }
        vtable.get_property = { _, _, _, _, _, _, data in
            let stub = Unmanaged<StubSecretPortal>.fromOpaque(data!).takeUnretainedValue()
            return g_variant_new_uint32(stub.version)
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = g_dbus_connection_register_object(connection, "/org/freedesktop/portal/desktop", node.pointee.interfaces[0], &vtable, me, nil, nil)
        self.vtable = vtable
        self.node = g_dbus_node_info_ref(node)
        uniqueName = String(cString: g_dbus_connection_get_unique_name(connection))
        ready.signal()
        while running.load(ordering: .acquiring) { g_main_context_iteration(context, 1) }
        if let kept = self.node { g_dbus_node_info_unref(kept) }
    }

    private var vtable = GDBusInterfaceVTable()
    private var node: UnsafeMutablePointer<GDBusNodeInfo>?

    private func handle(
        _ connection: OpaquePointer, sender: String, path: String, method: String, parameters: OpaquePointer,
        invocation: OpaquePointer
    ) {
        if method == "Close" {
            record.withLock { $0.closedPaths.append(path) }
            g_dbus_method_invocation_return_value(invocation, nil)
            return
        }
        // RetrieveSecret(h fd, a{sv} options)
        let message = g_dbus_method_invocation_get_message(invocation)
        let fd = g_dbus_message_get_unix_fd_list(message).map { g_unix_fd_list_get($0, 0, nil) } ?? -1
        let options = g_variant_get_child_value(parameters, 1)!
        defer { g_variant_unref(options) }
        let string = g_variant_type_new("s")
        defer { g_variant_type_free(string) }
        let tokenValue = g_variant_lookup_value(options, "handle_token", string)
        let token = tokenValue.map { String(cString: g_variant_get_string($0, nil)) } ?? "none"
        if let tokenValue { g_variant_unref(tokenValue) }
        let requestPath = "/org/freedesktop/portal/desktop/request/"
            + sender.drop { $0 == ":" }.replacingOccurrences(of: ".", with: "_") + "/" + token
        record.withLock {
            $0.retrieveCalls += 1
            $0.requestPaths.append(requestPath)
        }
        if let node {
            var vtable = self.vtable
            _ = g_dbus_connection_register_object(connection, requestPath, node.pointee.interfaces[1], &vtable, Unmanaged.passUnretained(self).toOpaque(), nil, nil)
        }
        g_dbus_method_invocation_return_value(invocation, g_variant_new_tuple_one(g_variant_new_object_path(requestPath)))
        switch behaviour {
        case .never:
            keptFDs.append(fd)
        case .malformedResponse:
            var data = Self.pattern(64)
            if fd >= 0 {
                _ = write(fd, &data, data.count)
                close(fd)
            }
            _ = g_dbus_connection_emit_signal(
                connection, sender, requestPath, "org.freedesktop.portal.Request", "Response", g_variant_new_tuple_one(g_variant_new_string("0")), nil)
        case .answer(let response, let bytes):
            var data = Self.pattern(bytes)
            if fd >= 0 {
                _ = write(fd, &data, data.count)
                close(fd)
            }
            let entry = g_variant_type_new("{sv}")
            defer { g_variant_type_free(entry) }
            let results = g_variant_new_array(entry, nil, 0)
            var children: [OpaquePointer?] = [g_variant_new_uint32(response), results]
            let body = children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 2) }
            _ = g_dbus_connection_emit_signal(connection, sender, requestPath, "org.freedesktop.portal.Request", "Response", body, nil)
        }
    }
}

/// A one-element tuple (floating).
private func g_variant_new_tuple_one(_ child: OpaquePointer?) -> OpaquePointer {
    var children = [child]
    return children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 1) }
}
