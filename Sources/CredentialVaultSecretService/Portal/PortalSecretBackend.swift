import CLibSecret
import CredentialVault

/// The Secret portal's backend called directly: `org.freedesktop.impl.portal.Secret`, which
/// gnome-keyring serves on `org.freedesktop.secrets` at `/org/freedesktop/portal/desktop`, and
/// which xdg-desktop-portal calls on behalf of a sandboxed application with the app id it
/// found. Here the caller names the app id, so this is for tests (what the real backend gives
/// for an app id) and never reached from the public API: an application that could choose
/// its id could read every other application's secret.
package struct PortalSecretBackend: Sendable {
    /// The bus (`nil`: the session bus).
    package var busAddress: String?
    /// The backend's bus name.
    package var busName = "org.freedesktop.secrets"
    /// How long the call and the read of the pipe may take, each.
    package var timeout: Duration

    /// The backend on the bus at `busAddress` (the session bus by default).
    package init(busAddress: String? = nil, timeout: Duration = .seconds(10)) {
        self.busAddress = busAddress
        self.timeout = timeout
    }

    /// `RetrieveSecret(o handle, s app_id, h fd, a{sv} options)`: the 64 bytes the backend keeps
    /// for `applicationID`. Errors as `SecretPortal.retrieveSecret()`'s.
    @available(*, noasync, message: "blocks the calling thread")
    package func retrieveSecret(applicationID: String) throws(CredentialVaultError) -> SecureBytes {
        let deadline = Deadline(timeout)
        defer { deadline.finish() }
        let bus: OpaquePointer
        do {
            bus = try ServiceConnection.openBus(address: busAddress, deadline.cancellable)
        } catch {
            throw error.portalError(deadlineExpired: deadline.hasExpired, callee: busName)
        }
        defer { g_object_unref(UnsafeMutableRawPointer(bus)) }
        let pipe = try PortalPipe()
        let handle = "\(PortalCall.objectPath)/request/credvault/\(PortalCall.freshToken())"
        let parameters = PortalCall.tuple([
            g_variant_new_object_path(handle), g_variant_new_string(applicationID), g_variant_new_handle(0), PortalCall.options([]),
        ])
        let reply = try PortalCall.withPipe(
            pipe, bus: bus, name: busName, interface: "org.freedesktop.impl.portal.Secret", method: "RetrieveSecret",
            parameters: parameters, replyType: "(ua{sv})", deadline: deadline)
        let response = PortalCall.uint32(reply, child: 0)
        g_variant_unref(reply)
        try PortalCall.check(response: response)
        return try pipe.readSecret(until: .now + timeout) { false }
    }
}

