/* libsecret's D-Bus path API (secret-paths.h: search for item paths, make an item proxy from a
 * path) is labelled "unstable" but unchanged since libsecret 0.7; the Secret Service backend
 * needs it to search a collection whose items other clients delete concurrently. */
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include <libsecret/secret.h>
/* g_unix_open_pipe (pipe2 with O_CLOEXEC) and GUnixFDList, for the Secret portal's pipe. */
#include <glib-unix.h>
#include <gio/gunixfdlist.h>

/* SecretService's constructor points every proxy at the session bus (g-bus-type), whatever
 * connection it is given. This subclass skips that constructor (GDBusProxy's is used), so that
 * a proxy can be made on another bus; everything else is SecretService's. */
static GObject *credvault_service_constructor(GType type, guint count, GObjectConstructParam *properties)
{
    GObjectClass *proxy_class = G_OBJECT_CLASS(g_type_class_peek(G_TYPE_DBUS_PROXY));
    return proxy_class->constructor(type, count, properties);
}

static void credvault_service_class_init(gpointer klass, gpointer data)
{
    (void)data;
    G_OBJECT_CLASS(klass)->constructor = credvault_service_constructor;
}

/* The subclass's type, registered on first use (once per process). */
static inline GType credvault_service_get_type(void)
{
    static gsize registered = 0;
    if (g_once_init_enter(&registered)) {
        GType type = g_type_from_name("CredentialVaultSecretService");
        if (type == 0) {
            GTypeQuery query;
            g_type_query(SECRET_TYPE_SERVICE, &query);
            type = g_type_register_static_simple(
                SECRET_TYPE_SERVICE, g_intern_static_string("CredentialVaultSecretService"), query.class_size,
                credvault_service_class_init, query.instance_size, NULL, 0);
        }
        g_once_init_leave(&registered, type);
    }
    return (GType)registered;
}

/* A SecretService proxy of its own (not libsecret's process-wide one) on `connection`, with a
 * session of its own opened (OpenSession, dh-ietf1024-sha256-aes128-cbc-pkcs7 where the provider
 * offers it): what secret_service_open_sync does, on a given connection instead of the session
 * bus (g_initable_new is variadic, which Swift cannot call). NULL and `error` set on failure. */
static inline SecretService *credvault_secret_service_open(
    GDBusConnection *connection, const gchar *bus_name, GCancellable *cancellable, GError **error)
{
    return (SecretService *)g_initable_new(
        credvault_service_get_type(), cancellable, error,
        "g-flags", G_DBUS_PROXY_FLAGS_NONE,
        "g-name", bus_name,
        "g-connection", connection,
        "g-object-path", "/org/freedesktop/secrets",
        "g-interface-name", "org.freedesktop.Secret.Service",
        "flags", SECRET_SERVICE_OPEN_SESSION,
        NULL);
}
