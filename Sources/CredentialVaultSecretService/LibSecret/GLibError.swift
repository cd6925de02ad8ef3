import CLibSecret

/// A `GError` copied out of glib (domain, code, message and the remote D-Bus error name, when
/// there is one) and freed. Messages come from glib, D-Bus and the Secret Service daemon; they
/// name objects and failures, never secret values (the value travels in a separate structure).
struct GLibError: Error, Sendable {
    /// The error domain (`G_IO_ERROR`, `G_DBUS_ERROR`, `SECRET_ERROR`, ...).
    let domain: GQuark
    /// The code within `domain`.
    let code: Int32
    /// The human-readable message, with any `GDBus.Error:<name>:` prefix stripped.
    let message: String
    /// The D-Bus error name when the error came from the remote side
    /// (for example `org.freedesktop.Secret.Error.NoSession`).
    let remoteName: String?

    /// Copies `error` and frees it (the caller gives up ownership).
    init(taking error: UnsafeMutablePointer<GError>) {
        if let remote = g_dbus_error_get_remote_error(error) {
            remoteName = String(cString: remote)
            g_free(remote)
        } else {
            remoteName = nil
        }
        _ = g_dbus_error_strip_remote_error(error)
        domain = error.pointee.domain
        code = error.pointee.code
        message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
        g_error_free(error)
    }

    /// Whether the error is in `domain` with `code`.
    func matches(_ domain: GQuark, _ code: UInt32) -> Bool {
        self.domain == domain && UInt32(bitPattern: self.code) == code
    }

    /// The object (an item deleted by someone else, for example) does not exist any more.
    /// gnome-keyring answers a call on a deleted item with `UnknownMethod` ("No such secret item
    /// at path: ..." or "Object does not exist at path ..."), other providers with
    /// `UnknownObject` or the Secret Service's `NoSuchObject`.
    var isNoSuchObject: Bool {
        let dbus = g_dbus_error_quark()
        if matches(secret_error_get_quark(), SECRET_ERROR_NO_SUCH_OBJECT.rawValue)
            || remoteName == "org.freedesktop.Secret.Error.NoSuchObject"
            || matches(dbus, G_DBUS_ERROR_UNKNOWN_OBJECT.rawValue) || remoteName == "org.freedesktop.DBus.Error.UnknownObject"
        {
            return true
        }
        // An unknown method or interface is a missing object only when the message says so
        // (gnome-keyring: "No such secret item at path ...", GDBus: "Object does not exist at
        // path ..."): a provider that lacks a method must not make a failed delete look like
        // "already gone".
        let unknownMember =
            matches(dbus, G_DBUS_ERROR_UNKNOWN_METHOD.rawValue) || matches(dbus, G_DBUS_ERROR_UNKNOWN_INTERFACE.rawValue)
            || remoteName == "org.freedesktop.DBus.Error.UnknownMethod"
            || remoteName == "org.freedesktop.DBus.Error.UnknownInterface"
        return unknownMember && (message.hasPrefix("No such") || message.hasPrefix("Object does not exist"))
    }

    /// A `Properties` call for `interface` on the object at `path` found no such interface there,
    /// as Qt D-Bus words it ("Interface <interface> was not found in object <path>",
    /// `UnknownInterface`). KeePassXC answers so for an item it deleted while the call was on
    /// its way: Qt routes the call to the item's path on its D-Bus thread, KeePassXC's main
    /// thread unregisters the item before handling it, and Qt's own `Properties` handler then
    /// finds nothing at the path. A new item's path and object are registered together on that
    /// main thread, so this never means "not there yet"; asked of a path the provider listed as
    /// an object with `interface`, it means the object is gone. Matched exactly (interface and
    /// path), so that any other missing interface stays an error.
    func saysInterfaceGone(_ interface: String, at path: String) -> Bool {
        (matches(g_dbus_error_quark(), G_DBUS_ERROR_UNKNOWN_INTERFACE.rawValue)
            || remoteName == "org.freedesktop.DBus.Error.UnknownInterface")
            && message == "Interface \(interface) was not found in object \(path)"
    }

    /// The provider refused the session's key exchange: kwalletd5 before KWallet 6.25 sometimes
    /// answers `OpenSession` with `InvalidArgs` ("Client public key size is invalid", KDE bug
    /// 514194); a new session usually works.
    var isFailedSessionNegotiation: Bool {
        remoteName == "org.freedesktop.DBus.Error.InvalidArgs" || matches(g_dbus_error_quark(), G_DBUS_ERROR_INVALID_ARGS.rawValue)
    }

    /// The provider could not decrypt the secret sent with `CreateItem`: kwalletd5 answers
    /// "Can't find session ..." (Qt's `org.qtproject.QtDBus.Error.InvalidObjectPath`;
    /// `UnknownObject` from `SetSecret`) when its session's key does not decrypt it, which
    /// happens when the key was negotiated wrongly (KWallet before 6.25, KDE bug 514194), and
    /// for a session it does not know. Either way a new session is what helps.
    var refusesSentSecret: Bool {
        guard let remoteName, message.hasPrefix("Can't find session") else { return false }
        return remoteName.hasSuffix(".InvalidObjectPath") || remoteName == "org.freedesktop.DBus.Error.UnknownObject"
    }

    /// The provider left the bus (exited, crashed, was killed) while a call to it was pending:
    /// the bus answers for it ("Message recipient disconnected from message bus without replying").
    var recipientLeft: Bool {
        (matches(g_dbus_error_quark(), G_DBUS_ERROR_NO_REPLY.rawValue) || remoteName == "org.freedesktop.DBus.Error.NoReply")
            && message.contains("disconnected")
    }

    /// The held connection is no use any more (the daemon restarted and forgot our session, it
    /// left the bus, or the bus itself went away): reconnect on the next operation.
    var invalidatesConnection: Bool {
        remoteName == "org.freedesktop.Secret.Error.NoSession"
            || matches(g_dbus_error_quark(), G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue)
            || matches(g_dbus_error_quark(), G_DBUS_ERROR_NAME_HAS_NO_OWNER.rawValue)
            || matches(g_dbus_error_quark(), G_DBUS_ERROR_DISCONNECTED.rawValue)
            || matches(g_io_error_quark(), G_IO_ERROR_CLOSED.rawValue) || recipientLeft
    }
}

/// Calls `body` with a `GError **` out-parameter and returns its result, or throws the error
/// glib reported (whatever `body` returned then is discarded by the caller's `throw`).
func withGError<T>(_ body: (UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> T) throws(GLibError) -> T {
    var error: UnsafeMutablePointer<GError>?
    let result = body(&error)
    if let error { throw GLibError(taking: error) }
    return result
}
