/* libsecret's D-Bus path API (secret-paths.h: search for item paths, make an item proxy from a
 * path) is labelled "unstable" but unchanged since libsecret 0.7; the Secret Service backend
 * needs it to search a collection whose items other clients delete concurrently. */
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include <libsecret/secret.h>

/* A SecretService proxy of its own (not libsecret's process-wide one) on `connection`, with a
 * session of its own opened (OpenSession, dh-ietf1024-sha256-aes128-cbc-pkcs7 where the provider
 * offers it). What secret_service_open_sync does, on a given connection instead of the session
 * bus: g_initable_new is variadic, which Swift cannot call. NULL and `error` set on failure. */
static inline SecretService *credvault_secret_service_open(
    GDBusConnection *connection, const gchar *bus_name, GCancellable *cancellable, GError **error)
{
    return (SecretService *)g_initable_new(
        SECRET_TYPE_SERVICE, cancellable, error,
        "g-flags", G_DBUS_PROXY_FLAGS_NONE,
        "g-name", bus_name,
        "g-connection", connection,
        "g-object-path", "/org/freedesktop/secrets",
        "g-interface-name", "org.freedesktop.Secret.Service",
        "flags", SECRET_SERVICE_OPEN_SESSION,
        NULL);
}
