import CLibSecret
import CredentialVault

/// The XDG Secret portal (`org.freedesktop.portal.Secret`), for applications in a Flatpak or
/// Snap sandbox: the portal gives each application 64 random bytes of its own, kept by the
/// user's keyring (gnome-keyring keeps them in the login collection), without access to the
/// Secret Service itself (no `--talk-name=org.freedesktop.secrets`).
///
/// Only inside a sandbox (`Sandbox.detect()`): outside one xdg-desktop-portal gives every
/// caller the app id "", so every unsandboxed program would get the same bytes; the calls
/// refuse with `unsupported` there, before anything is sent.
///
/// Every wait has a deadline: each D-Bus call (`callTimeout`), the portal's answer
/// (`responseTimeout`, generous: the keyring may ask the person to unlock it) and the read of
/// the pipe (`readTimeout`). The blocking calls are `noasync`; their async twins run on a
/// thread of their own, and cancelling the waiting task closes the portal's request
/// (`Request.Close`) and throws `cancelled`.
public struct SecretPortal: Sendable {
    /// How long the portal's answer may take by default: two minutes, for a person to unlock
    /// the keyring when the portal asks.
    public static let defaultResponseTimeout: Duration = .seconds(120)

    /// The sandbox this process runs in; `nil` outside one (then nothing is asked).
    public let sandbox: Sandbox?
    /// How long each D-Bus call (the version, the request, its closing) may take.
    public var callTimeout: Duration
    /// How long the portal's answer may take once asked (a person may be unlocking the keyring).
    public var responseTimeout: Duration
    /// How long reading the secret from the pipe may take once the portal answered.
    public var readTimeout: Duration
    /// The bus (`nil`: the session bus); tests use a private one.
    package var busAddress: String?
    /// The frontend's bus name; tests give a stub's.
    package var portalName = "org.freedesktop.portal.Desktop"

    /// The portal of this process's sandbox (`Sandbox.detect()`), on the session bus.
    public init(
        callTimeout: Duration = .seconds(5), responseTimeout: Duration = SecretPortal.defaultResponseTimeout, readTimeout: Duration = .seconds(5)
    ) {
        self.init(sandbox: Sandbox.detect(), callTimeout: callTimeout, responseTimeout: responseTimeout, readTimeout: readTimeout)
    }

    /// A portal client that takes `sandbox` as this process's (tests, and the resolver, which
    /// detected it already).
    package init(
        sandbox: Sandbox?, busAddress: String? = nil, portalName: String = "org.freedesktop.portal.Desktop",
        callTimeout: Duration = .seconds(5), responseTimeout: Duration = SecretPortal.defaultResponseTimeout, readTimeout: Duration = .seconds(5)
    ) {
        self.sandbox = sandbox
        self.busAddress = busAddress
        self.portalName = portalName
        self.callTimeout = callTimeout
        self.responseTimeout = responseTimeout
        self.readTimeout = readTimeout
    }

    static let interface = "org.freedesktop.portal.Secret"

    /// The portal's `version` property (1 is the only version there is).
    ///
    /// Errors: `unsupported` (not in a sandbox), `notAvailable` (no portal, or no Secret portal
    /// in it), `timedOut`, `io`.
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public func version() throws(CredentialVaultError) -> UInt32 {
        let sandbox = try requireSandbox()
        _ = sandbox
        return try withBus { (bus) throws(CredentialVaultError) in try readVersion(bus) }
    }

    /// The application's 64-byte secret from the portal, in guarded memory (wipe it by letting
    /// it go). Checks the portal's version first (only 1 is known).
    ///
    /// Errors: `unsupported` (not in a sandbox), `notAvailable` (no portal, a version other
    /// than 1, or the portal failed: response 2), `locked` (the person declined to unlock the
    /// keyring: response 1), `timedOut` (a call, the answer or the read outlived its deadline),
    /// `cancelled` (the waiting task was cancelled: the request was closed), `io` (the portal
    /// sent another number of bytes than 64, or the pipe failed).
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    public func retrieveSecret() throws(CredentialVaultError) -> SecureBytes {
        _ = try requireSandbox()
        return try withBus { (bus) throws(CredentialVaultError) in
            let version = try readVersion(bus)
            guard version == 1 else {
                throw .notAvailable("the Secret portal is version \(version); this library knows version 1 only")
            }
            return try PortalRequest(portal: self, bus: bus).run()
        }
    }

    private func requireSandbox() throws(CredentialVaultError) -> Sandbox {
        guard let sandbox else {
            throw .unsupported(
                "the Secret portal gives a secret of its own only to a sandboxed application (Flatpak, Snap); this process is not in a sandbox (no /.flatpak-info, not in a snap's cgroup), and outside one every program would get the same secret")
        }
        return sandbox
    }

    /// Runs `body` with a new reference to the bus, on a private main context made the
    /// thread's default (where the request's signal is delivered), both released afterwards.
    private func withBus<T>(_ body: (OpaquePointer) throws(CredentialVaultError) -> T) throws(CredentialVaultError) -> T {
        let context = g_main_context_new()
        g_main_context_push_thread_default(context)
        defer {
            g_main_context_pop_thread_default(context)
            g_main_context_unref(context)
        }
        let deadline = Deadline(callTimeout)
        defer { deadline.finish() }
        CancellationFlag.current?.onCancel { deadline.cancel() }
        let bus: OpaquePointer
        do {
            bus = try ServiceConnection.openBus(address: busAddress, deadline.cancellable)
        } catch {
            throw deadline.settle(error.portalError(deadlineExpired: deadline.hasExpired, callee: portalName))
        }
        defer { g_object_unref(UnsafeMutableRawPointer(bus)) }
        return try body(bus)
    }

    /// `org.freedesktop.DBus.Properties.Get(org.freedesktop.portal.Secret, version)`.
    private func readVersion(_ bus: OpaquePointer) throws(CredentialVaultError) -> UInt32 {
        let deadline = Deadline(callTimeout)
        defer { deadline.finish() }
        CancellationFlag.current?.onCancel { deadline.cancel() }
        let type = g_variant_type_new("(v)")
        defer { g_variant_type_free(type) }
        let reply: OpaquePointer?
        do {
            reply = try withGError {
                g_dbus_connection_call_sync(
                    bus, portalName, PortalCall.objectPath, "org.freedesktop.DBus.Properties", "Get",
                    PortalCall.tuple([g_variant_new_string(Self.interface), g_variant_new_string("version")]), type,
                    G_DBUS_CALL_FLAGS_NONE, PortalCall.timeoutMilliseconds(deadline), deadline.cancellable, $0)
            }
        } catch {
            throw deadline.settle(error.portalError(deadlineExpired: deadline.hasExpired, callee: portalName))
        }
        guard let reply else { throw .io("the Secret portal gave no version") }
        defer { g_variant_unref(reply) }
        let boxed = g_variant_get_child_value(reply, 0)!
        defer { g_variant_unref(boxed) }
        let value = g_variant_get_variant(boxed)!
        defer { g_variant_unref(value) }
        let unsigned = g_variant_type_new("u")
        defer { g_variant_type_free(unsigned) }
        guard g_variant_is_of_type(value, unsigned) != 0 else {
            throw .notAvailable("the Secret portal's version is not a number (u): it is not the portal this library knows")
        }
        return g_variant_get_uint32(value)
    }
}
