#include <sodium.h>
#include <sys/prctl.h>

/* prctl(2) is variadic, which Swift cannot call: fixed-arity wrappers for ProcessHardening. */
static inline int credvault_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
}
static inline int credvault_get_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL); }
