/* libsecret's D-Bus path API (secret-paths.h: search for item paths, make an item proxy from a
 * path) is labelled "unstable" but unchanged since libsecret 0.7; the Secret Service backend
 * needs it to search a collection whose items other clients delete concurrently. */
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include <libsecret/secret.h>
