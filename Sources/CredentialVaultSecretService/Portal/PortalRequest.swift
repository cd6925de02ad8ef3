import CLibSecret
import CredentialVault
import Synchronization

/// One `RetrieveSecret` request to the portal's frontend, on the calling thread's default
/// main context (`SecretPortal.withBus` made it):
///
/// 1. the request's object path is computed from our unique name and a fresh `handle_token`
///    (`/org/freedesktop/portal/desktop/request/<sender>/<token>`, the sender without its `:`
///    and with `.` as `_`), and its `Response` signal subscribed to **before** the call, from
///    the portal's unique name (`nameOwner`), so an answer sent at once is not missed;
/// 2. `RetrieveSecret(h fd, a{sv} {"handle_token": token})` is called with the pipe's write end
///    as a Unix fd (our copy closed once it is passed);
/// 3. the answer is awaited until `responseTimeout`; the deadline or the waiting task's
///    cancellation ends the wait and closes the request (`Request.Close`);
/// 4. on response 0 the pipe is read: exactly 64 bytes, within `readTimeout`.
struct PortalRequest {
    let portal: SecretPortal
    let bus: OpaquePointer

    static let requestInterface = "org.freedesktop.portal.Request"

    func run() throws(CredentialVaultError) -> SecureBytes {
        guard let unique = g_dbus_connection_get_unique_name(bus).map({ String(cString: $0) }) else {
            throw .notAvailable("the D-Bus connection has no unique name: it is not a message bus")
        }
        let token = PortalCall.freshToken()
        let expected = Self.requestPath(sender: unique, token: token)
        let answer = Answer()
        let owner = try nameOwner()
        var subscriptions = [subscribe(expected, owner: owner, answer)]
        defer {
            for id in subscriptions { g_dbus_connection_signal_unsubscribe(bus, id) }
            // GDBus releases a subscription's data (our `Answer`) from an idle source on this
            // context: run it before the context goes, or the reference is never dropped.
            let context = g_main_context_get_thread_default()
            while g_main_context_iteration(context, 0) != 0 {}
        }

        let pipe = try PortalPipe()
        let callDeadline = Deadline(portal.callTimeout)
        defer { callDeadline.finish() }
        CancellationFlag.current?.onCancel { callDeadline.cancel() }
        let reply: OpaquePointer
        do {
            reply = try PortalCall.withPipe(
                pipe, bus: bus, name: portal.portalName, interface: SecretPortal.interface, method: "RetrieveSecret",
                parameters: PortalCall.tuple([g_variant_new_handle(0), PortalCall.options([("handle_token", token)])]),
                replyType: "(o)", deadline: callDeadline)
        } catch .cancelled {
            // Given up while the call was on its way: the portal may have made the request
            // already, at the path it was told (a portal that names another is not reached).
            close(expected)
            throw .cancelled
        } catch .timedOut {
            close(expected)
            throw .timedOut
        }
        let handle = Self.string(reply)
        g_variant_unref(reply)
        // A portal older than the handle_token convention names another path: that one is
        // listened to as well (its answer cannot have been dispatched yet: this thread's
        // context has not run since the call).
        if handle != expected { subscriptions.append(subscribe(handle, owner: owner, answer)) }

        let response = try awaitResponse(answer, handle: handle)
        guard response != Answer.malformed else {
            throw .io("the Secret portal's Response is not (ua{sv}): it is not the portal this library knows")
        }
        try PortalCall.check(response: response)
        let cancellation = CancellationFlag.current
        return try pipe.readSecret(until: .now + portal.readTimeout) { cancellation?.isCancelled ?? false }
    }

    /// Iterates this thread's context until the answer comes or the wait ends (deadline, or
    /// the task cancelled: the request is then closed).
    private func awaitResponse(_ answer: Answer, handle: String) throws(CredentialVaultError) -> UInt32 {
        let deadline = Deadline(portal.responseTimeout)
        defer { deadline.finish() }
        CancellationFlag.current?.onCancel { deadline.cancel() }
        let context = g_main_context_get_thread_default()
        // The cancellable's cancellation wakes the context (a source that fires then).
        let wake = g_cancellable_source_new(deadline.cancellable)!
        g_source_set_callback(wake, { _ in 0 }, nil, nil)
        g_source_attach(wake, context)
        defer {
            g_source_destroy(wake)
            g_source_unref(wake)
        }
        while answer.response == nil && g_cancellable_is_cancelled(deadline.cancellable) == 0 {
            g_main_context_iteration(context, 1)
        }
        if let response = answer.response { return response }
        close(handle)
        throw deadline.wasCancelled ? .cancelled : .timedOut
    }

    /// `Request.Close` on `handle`, within `callTimeout`; its failure changes nothing (the
    /// request is given up either way).
    private func close(_ handle: String) {
        let deadline = Deadline(portal.callTimeout)
        defer { deadline.finish() }
        let reply = try? withGError {
            g_dbus_connection_call_sync(
                bus, portal.portalName, handle, Self.requestInterface, "Close", nil, nil, G_DBUS_CALL_FLAGS_NONE,
                PortalCall.timeoutMilliseconds(deadline), deadline.cancellable, $0)
        }
        if let reply { g_variant_unref(reply) }
    }

    /// The unique name that owns the portal's name now (`GetNameOwner`, within `callTimeout`).
    ///
    /// Why: the `Response` is matched by that unique name, not by the well-known name. GLib with
    /// the fix of CVE-2024-34397 (Debian 12's 2.74 has it) drops a signal from a well-known name
    /// until its own `GetNameOwner` has returned, and gnome-keyring's quick answer sometimes beats
    /// it: the answer would be lost and the wait would end only at its deadline (libsecret 0.20.5
    /// waits so about one call in ten; docs/TESTING.md, *The Flatpak sandbox*).
    private func nameOwner() throws(CredentialVaultError) -> String {
        let deadline = Deadline(portal.callTimeout)
        defer { deadline.finish() }
        CancellationFlag.current?.onCancel { deadline.cancel() }
        let type = g_variant_type_new("(s)")
        defer { g_variant_type_free(type) }
        let reply: OpaquePointer?
        do {
            reply = try withGError {
                g_dbus_connection_call_sync(
                    bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
                    PortalCall.tuple([g_variant_new_string(portal.portalName)]), type, G_DBUS_CALL_FLAGS_NONE,
                    PortalCall.timeoutMilliseconds(deadline), deadline.cancellable, $0)
            }
        } catch {
            throw deadline.settle(error.portalError(deadlineExpired: deadline.hasExpired, callee: portal.portalName))
        }
        guard let reply else { throw .notAvailable("nothing owns \(portal.portalName) on the session bus") }
        defer { g_variant_unref(reply) }
        return Self.string(reply)
    }

    /// Subscribes `answer` to the `Response` signal of the request at `path`, from `owner`
    /// (the portal's unique name).
    private func subscribe(_ path: String, owner: String, _ answer: Answer) -> UInt32 {
        let box = Unmanaged.passRetained(answer).toOpaque()
        return g_dbus_connection_signal_subscribe(
            bus, owner, Self.requestInterface, "Response", path, nil, G_DBUS_SIGNAL_FLAGS_NONE,
            { _, _, _, _, _, parameters, data in
                guard let data, let parameters else { return }
                let answer = Unmanaged<Answer>.fromOpaque(data).takeUnretainedValue()
                // Only the portal's unique name reaches here: another signature is its answer
                // all the same, a broken one (an error now, not a wait until the deadline).
                let expected = g_variant_type_new("(ua{sv})")
                defer { g_variant_type_free(expected) }
                guard g_variant_is_of_type(parameters, expected) != 0 else { return answer.record(Answer.malformed) }
                answer.record(PortalCall.uint32(parameters, child: 0))
            },
            box,
            { data in if let data { Unmanaged<Answer>.fromOpaque(data).release() } })
    }

    /// The path xdg-desktop-portal gives a request made with `token` by the connection `sender`.
    static func requestPath(sender: String, token: String) -> String {
        let name = sender.drop { $0 == ":" }.replacingOccurrences(of: ".", with: "_")
        return "\(PortalCall.objectPath)/request/\(name)/\(token)"
    }

    /// The string (or object path) that is the first child of `reply`.
    private static func string(_ reply: OpaquePointer) -> String {
        let child = g_variant_get_child_value(reply, 0)!
        defer { g_variant_unref(child) }
        return String(cString: g_variant_get_string(child, nil))
    }

    /// The first response code delivered (signals arrive on this thread's context).
    final class Answer: Sendable {
        /// Recorded for a `Response` of another signature (no response code of the protocol).
        static let malformed = UInt32.max
        private let code = Mutex<UInt32?>(nil)
        var response: UInt32? { code.withLock { $0 } }
        func record(_ value: UInt32) { code.withLock { if $0 == nil { $0 = value } } }
    }
}
