import CLibSecret
import CredentialVault

/// What the Secret portal's client (`SecretPortal`) and the direct call to its backend
/// (`PortalSecretBackend`) share: the method call that passes the pipe, the meaning of a
/// request's response code, and the errors in the portal's words.
enum PortalCall {
    /// The portal's object, on the frontend (`org.freedesktop.portal.Desktop`) and on the
    /// backend gnome-keyring serves (`org.freedesktop.secrets`) alike.
    static let objectPath = "/org/freedesktop/portal/desktop"

    /// Calls `method` with `parameters` (a floating tuple `GVariant` whose `h` is handle 0, the
    /// pipe's write end), within `deadline`. Our copy of the write end is closed before the
    /// call is sent. Returns the reply (owned: `g_variant_unref` it).
    static func withPipe(
        _ pipe: PortalPipe, bus: OpaquePointer, name: String, interface: String, method: String,
        parameters: OpaquePointer, replyType: String, deadline: Deadline
    ) throws(CredentialVaultError) -> OpaquePointer {
        let list: UnsafeMutablePointer<GUnixFDList>
        do {
            list = try pipe.handOverWriteEnd()
        } catch {
            g_variant_unref(g_variant_ref_sink(parameters))
            throw error
        }
        // The list's duplicate goes with the message; ours is released once it is sent.
        defer { g_object_unref(UnsafeMutableRawPointer(list)) }
        let type = g_variant_type_new(replyType)
        defer { g_variant_type_free(type) }
        do throws(GLibError) {
            let reply = try withGError {
                g_dbus_connection_call_with_unix_fd_list_sync(
                    bus, name, objectPath, interface, method, parameters, type, G_DBUS_CALL_FLAGS_NONE,
                    timeoutMilliseconds(deadline), list, nil, deadline.cancellable, $0)
            }
            guard let reply else { throw GLibError(taking: g_error_new_literal(g_io_error_quark(), Int32(G_IO_ERROR_FAILED.rawValue), "no reply")) }
            return reply
        } catch {
            throw deadline.settle(error.portalError(deadlineExpired: deadline.hasExpired, callee: name))
        }
    }

    /// The D-Bus time-out of a call under `deadline` (its own, a little longer: the deadline's
    /// cancellation is what ends it, so that the cause is known).
    static func timeoutMilliseconds(_ deadline: Deadline) -> Int32 {
        let (seconds, attoseconds) = deadline.duration.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1000)
    }

    /// Throws the error a request's response code means (0 is success).
    /// 1: the person cancelled what the portal asked them (the only thing the Secret portal
    /// asks is to unlock the keyring): `locked`. 2: the portal ended the request otherwise (it
    /// could not get or make the secret): `notAvailable`. Anything else is not the portal's
    /// protocol: `io`.
    static func check(response: UInt32) throws(CredentialVaultError) {
        switch response {
        case 0: return
        case 1: throw .locked
        case 2:
            throw .notAvailable(
                "the Secret portal could not give this application its secret (response 2: the keyring that holds it failed or refused); check the keyring (gnome-keyring) and retry")
        default: throw .io("the Secret portal answered with the unknown response code \(response)")
        }
    }

    /// `{"handle_token": token}` and the like: an `a{sv}` of string values (floating).
    static func options(_ strings: [(String, String)]) -> OpaquePointer {
        // A type made and freed here: `g_variant_type_checked_("a{sv}")` would hand GLib a
        // temporary copy of the string, freed before the builder reads it (AddressSanitizer).
        let type = g_variant_type_new("a{sv}")
        defer { g_variant_type_free(type) }
        let builder = g_variant_builder_new(type)!
        defer { g_variant_builder_unref(builder) }
        for (key, value) in strings {
            g_variant_builder_add_value(builder, g_variant_new_dict_entry(g_variant_new_string(key), g_variant_new_variant(g_variant_new_string(value))))
        }
        return g_variant_builder_end(builder)
    }

    /// `g_variant_new_tuple` over `children` (each floating, consumed): a floating tuple.
    static func tuple(_ children: [OpaquePointer?]) -> OpaquePointer {
        var children = children
        return children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
    }

    /// The `u` at `child` of the tuple `tuple`.
    static func uint32(_ tuple: OpaquePointer, child: Int) -> UInt32 {
        let value = g_variant_get_child_value(tuple, gsize(child))
        defer { g_variant_unref(value) }
        return g_variant_get_uint32(value)
    }

    /// A token for a request's object path: letters and digits only (an object path element).
    static func freshToken() -> String {
        "credvault_" + Crypto.randomBytes(8).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }
}

extension String {
    /// The string with `0`s in front up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

extension GLibError {
    /// This D-Bus error in the Secret portal's words: what the Secret Service's mapping calls
    /// unreachable (no bus, no such name, a spawn failure), and a missing object, interface or
    /// method at `callee` (the portal's bus name), is `notAvailable`; a call our deadline ended
    /// is `timedOut`; the rest `io`.
    func portalError(deadlineExpired: Bool, callee: String) -> CredentialVaultError {
        let dbus = g_dbus_error_quark()
        let missing =
            matches(dbus, G_DBUS_ERROR_UNKNOWN_METHOD.rawValue) || matches(dbus, G_DBUS_ERROR_UNKNOWN_INTERFACE.rawValue)
            || matches(dbus, G_DBUS_ERROR_UNKNOWN_OBJECT.rawValue) || matches(dbus, G_DBUS_ERROR_UNKNOWN_PROPERTY.rawValue)
            || matches(dbus, G_DBUS_ERROR_INVALID_ARGS.rawValue)
        // gnome-keyring's backend answers so when the login collection is locked and could not
        // be unlocked (no prompter, or the person gave up): its gck error CKR_PIN_INCORRECT
        // (0xA0), which glib does not map to a D-Bus name.
        if remoteName == "org.gtk.GDBus.UnmappedGError.Quark._gck_2derror.Code160" { return .locked }
        switch vaultError(deadlineExpired: deadlineExpired) {
        case .timedOut: return .timedOut
        case .notAvailable:
            return .notAvailable(
                "no Secret portal answers as \(callee) (\(message)): it needs xdg-desktop-portal with a Secret backend (gnome-keyring), or another custody")
        case .permissionDenied: return .permissionDenied("the session bus refused the call to \(callee) (\(message))")
        case _ where missing:
            return .notAvailable("\(callee) has no Secret portal (\(message)): it needs xdg-desktop-portal with a Secret backend (gnome-keyring), or another custody")
        default: return .io("the call to the Secret portal (\(callee)) failed (\(message); \(remoteName ?? "code \(code)"))")
        }
    }
}
