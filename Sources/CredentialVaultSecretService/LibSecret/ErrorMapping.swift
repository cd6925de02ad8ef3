import CLibSecret
import CredentialVault

extension GLibError {
    /// Maps a glib / D-Bus / libsecret error to the vault's error.
    ///
    /// `deadlineExpired` tells whether our deadline cancelled the call. A cancelled call is a
    /// time-out here; when the waiting task's cancellation (not the deadline) cancelled it,
    /// `Deadline.settle(_:)` turns that into `cancelled` (the async API). `provider` is the
    /// program this process was talking to (`nil`: it never connected), for the messages.
    func vaultError(deadlineExpired: Bool, provider: SecretServiceProvider? = nil) -> CredentialVaultError {
        let io = g_io_error_quark()
        let dbus = g_dbus_error_quark()
        let secret = secret_error_get_quark()

        if recipientLeft && !deadlineExpired {
            return .notAvailable(
                "\(provider ?? .other) left the D-Bus session bus while answering: it quit or crashed; "
                    + "start it again, or choose another backend")
        }
        if matches(io, G_IO_ERROR_CANCELLED.rawValue) || matches(io, G_IO_ERROR_TIMED_OUT.rawValue)
            || matches(dbus, G_DBUS_ERROR_NO_REPLY.rawValue) || matches(dbus, G_DBUS_ERROR_TIMEOUT.rawValue)
            || matches(dbus, G_DBUS_ERROR_TIMED_OUT.rawValue)
        {
            return .timedOut
        }
        if matches(secret, SECRET_ERROR_IS_LOCKED.rawValue) || remoteName == "org.freedesktop.Secret.Error.IsLocked" {
            return .locked
        }
        if remoteName == "org.freedesktop.Secret.Error.NoSession" {
            return .notAvailable("the Secret Service restarted and forgot this process's session; retry")
        }
        if domain == dbus {
            switch UInt32(bitPattern: code) {
            case G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue, G_DBUS_ERROR_NAME_HAS_NO_OWNER.rawValue,
                G_DBUS_ERROR_SPAWN_EXEC_FAILED.rawValue, G_DBUS_ERROR_SPAWN_FORK_FAILED.rawValue,
                G_DBUS_ERROR_SPAWN_CHILD_EXITED.rawValue, G_DBUS_ERROR_SPAWN_CHILD_SIGNALED.rawValue,
                G_DBUS_ERROR_SPAWN_FAILED.rawValue, G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND.rawValue,
                G_DBUS_ERROR_SPAWN_SERVICE_INVALID.rawValue, G_DBUS_ERROR_SPAWN_FILE_INVALID.rawValue,
                G_DBUS_ERROR_SPAWN_NO_MEMORY.rawValue, G_DBUS_ERROR_SPAWN_PERMISSIONS_INVALID.rawValue,
                G_DBUS_ERROR_SPAWN_SETUP_FAILED.rawValue, G_DBUS_ERROR_SPAWN_CONFIG_INVALID.rawValue:
                if let provider {
                    return .notAvailable(
                        "\(provider) no longer answers on the D-Bus session bus: it quit or crashed (\(message)); "
                            + "start it again, or choose another backend")
                }
                return .notAvailable(
                    "no Secret Service provider on the D-Bus session bus (\(message)); start one (gnome-keyring, KWallet, "
                        + "or KeePassXC with its Secret Service integration enabled), or choose another backend")
            case G_DBUS_ERROR_ACCESS_DENIED.rawValue, G_DBUS_ERROR_AUTH_FAILED.rawValue:
                return .permissionDenied("the Secret Service refused access (\(message))")
            case G_DBUS_ERROR_NO_SERVER.rawValue, G_DBUS_ERROR_NO_NETWORK.rawValue,
                G_DBUS_ERROR_DISCONNECTED.rawValue, G_DBUS_ERROR_BAD_ADDRESS.rawValue,
                G_DBUS_ERROR_IO_ERROR.rawValue, G_DBUS_ERROR_FILE_NOT_FOUND.rawValue:
                return .notAvailable(
                    "cannot reach the D-Bus session bus (\(message)); run inside a desktop session or dbus-run-session")
            default:
                break
            }
        }
        if domain == io {
            // g_bus_get() reports a missing or unreachable session bus in G_IO_ERROR.
            switch UInt32(bitPattern: code) {
            case G_IO_ERROR_FAILED.rawValue, G_IO_ERROR_NOT_FOUND.rawValue, G_IO_ERROR_CONNECTION_REFUSED.rawValue,
                G_IO_ERROR_CLOSED.rawValue, G_IO_ERROR_BROKEN_PIPE.rawValue, G_IO_ERROR_CONNECTION_CLOSED.rawValue,
                G_IO_ERROR_NOT_CONNECTED.rawValue, G_IO_ERROR_PERMISSION_DENIED.rawValue,
                G_IO_ERROR_INVALID_ARGUMENT.rawValue, G_IO_ERROR_NOT_SUPPORTED.rawValue:
                return .notAvailable(
                    "cannot reach the D-Bus session bus (\(message)); run inside a desktop session or dbus-run-session")
            default:
                break
            }
        }
        if matches(secret, SECRET_ERROR_PROTOCOL.rawValue) {
            return .io("the Secret Service answered something unexpected (\(message))")
        }
        let domainName = g_quark_to_string(domain).map { String(cString: $0) } ?? "unknown"
        return .io("the Secret Service call failed (\(message); \(remoteName ?? "\(domainName) \(code)"))")
    }
}
