// The kernel keyring through raw syscalls: glibc has no add_key/keyctl wrappers (libkeyutils
// has, but one more library for five calls is not worth it) and syscall(2) is variadic, which
// Swift cannot call. Header-only: typed static inline wrappers, no library to link.
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/keyctl.h>

static inline int32_t ck_add_key(const char *type, const char *description,
                                 const void *payload, size_t plen, int32_t keyring) {
    return (int32_t)syscall(SYS_add_key, type, description, payload, plen, keyring);
}
static inline long ck_search(int32_t keyring, const char *type, const char *description, int32_t dest) {
    return syscall(SYS_keyctl, KEYCTL_SEARCH, keyring, type, description, dest);
}
/* Returns the key's size whatever buflen is; copies min(size, buflen) bytes. */
static inline long ck_read(int32_t key, void *buffer, size_t buflen) {
    return syscall(SYS_keyctl, KEYCTL_READ, key, buffer, buflen);
}
static inline long ck_set_timeout(int32_t key, unsigned int seconds) {
    return syscall(SYS_keyctl, KEYCTL_SET_TIMEOUT, key, seconds);
}
static inline long ck_setperm(int32_t key, uint32_t perm) {
    return syscall(SYS_keyctl, KEYCTL_SETPERM, key, perm);
}
static inline long ck_link(int32_t key, int32_t keyring) {
    return syscall(SYS_keyctl, KEYCTL_LINK, key, keyring);
}
static inline long ck_unlink(int32_t key, int32_t keyring) {
    return syscall(SYS_keyctl, KEYCTL_UNLINK, key, keyring);
}
static inline long ck_invalidate(int32_t key) {
    return syscall(SYS_keyctl, KEYCTL_INVALIDATE, key);
}
static const int32_t CK_USER_KEYRING = KEY_SPEC_USER_KEYRING;       /* @u: per uid */
static const int32_t CK_PROCESS_KEYRING = KEY_SPEC_PROCESS_KEYRING; /* @p: dies with the process */
