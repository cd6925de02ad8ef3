import CLibSecret

#if canImport(Glibc)
import Glibc
#endif

/// libsecret's object-path API (`secret-paths.h`): one D-Bus round trip per call, on the held
/// service connection, without making a `GDBusProxy` per collection or item (each proxy costs
/// `AddMatch` x2, `StartServiceByName`, `GetNameOwner`, `Properties.GetAll` and `RemoveMatch` x2).
///
/// libsecret exports these functions (since 0.7) but declares them only when
/// `SECRET_WITH_UNSTABLE` is defined, which the `CLibSecret` module does not; they are looked up
/// once with `dlsym` in the process's global symbol scope (libsecret is linked in).
struct PathCalls: @unchecked Sendable {
    // @unchecked: immutable C function pointers.

    typealias GErrorOut = UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?
    typealias PathList = UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>

    /// `Service.SearchItems`: the matching items' paths, unlocked and locked ones apart.
    let search: @convention(c) (
        UnsafeMutablePointer<SecretService>?, UnsafePointer<SecretSchema>?, OpaquePointer?, UnsafeMutablePointer<GCancellable>?,
        UnsafeMutablePointer<PathList?>?, UnsafeMutablePointer<PathList?>?, GErrorOut
    ) -> gboolean
    /// `Service.GetSecrets`: a table of item path to `SecretValue` (items that are gone or
    /// locked are left out).
    let getSecrets: @convention(c) (
        UnsafeMutablePointer<SecretService>?, UnsafeMutablePointer<UnsafePointer<gchar>?>?, UnsafeMutablePointer<GCancellable>?,
        GErrorOut
    ) -> OpaquePointer?
    /// `Service.ReadAlias`: the collection path, or NULL when there is no such alias.
    let readAlias: @convention(c) (
        UnsafeMutablePointer<SecretService>?, UnsafePointer<gchar>?, UnsafeMutablePointer<GCancellable>?, GErrorOut
    ) -> UnsafeMutablePointer<gchar>?
    /// A value as the `(oayays)` secret structure of the service's open session (encrypted for
    /// it), for a D-Bus call made without libsecret; floating.
    let encodeSecret: @convention(c) (UnsafeMutablePointer<SecretService>?, OpaquePointer?) -> OpaquePointer?

    /// The functions, or `nil` when this libsecret lacks one of them.
    static let shared: PathCalls? = {
        guard let process = dlopen(nil, RTLD_LAZY) else { return nil }
        func symbol<F>(_ name: String, as type: F.Type) -> F? {
            guard let address = dlsym(process, name) else { return nil }
            return unsafeBitCast(address, to: type)
        }
        guard let search = symbol("secret_service_search_for_dbus_paths_sync", as: type(of: PathCalls.searchType)),
            let getSecrets = symbol("secret_service_get_secrets_for_dbus_paths_sync", as: type(of: PathCalls.getSecretsType)),
            let readAlias = symbol("secret_service_read_alias_dbus_path_sync", as: type(of: PathCalls.readAliasType)),
            let encodeSecret = symbol("secret_service_encode_dbus_secret", as: type(of: PathCalls.encodeSecretType))
        else { return nil }
        return PathCalls(
            search: search, getSecrets: getSecrets, readAlias: readAlias,
            encodeSecret: encodeSecret)
    }()

    // Type witnesses for `symbol(_:as:)` (never called).
    private static let searchType: @convention(c) (
        UnsafeMutablePointer<SecretService>?, UnsafePointer<SecretSchema>?, OpaquePointer?, UnsafeMutablePointer<GCancellable>?,
        UnsafeMutablePointer<PathList?>?, UnsafeMutablePointer<PathList?>?, GErrorOut
    ) -> gboolean = { _, _, _, _, _, _, _ in 0 }
    private static let getSecretsType: @convention(c) (
        UnsafeMutablePointer<SecretService>?, UnsafeMutablePointer<UnsafePointer<gchar>?>?, UnsafeMutablePointer<GCancellable>?,
        GErrorOut
    ) -> OpaquePointer? = { _, _, _, _ in nil }
    private static let readAliasType: @convention(c) (
        UnsafeMutablePointer<SecretService>?, UnsafePointer<gchar>?, UnsafeMutablePointer<GCancellable>?, GErrorOut
    ) -> UnsafeMutablePointer<gchar>? = { _, _, _, _ in nil }
    private static let encodeSecretType: @convention(c) (UnsafeMutablePointer<SecretService>?, OpaquePointer?) -> OpaquePointer? = {
        _, _ in nil
    }
}
