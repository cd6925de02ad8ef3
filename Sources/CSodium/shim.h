#include <sodium.h>
#include <sys/prctl.h>

/* prctl(2) is variadic, which Swift cannot call: fixed-arity wrappers for ProcessHardening. */
static inline int credvault_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
}
static inline int credvault_get_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL); }

/* memfd_create(2) and file seals (fcntl F_ADD_SEALS) are declared only under _GNU_SOURCE, which
   Swift's Glibc module is built without: a fixed-arity wrapper over the system call and the
   kernel ABI's constants (include/uapi/linux/memfd.h and fcntl.h), for SealedMemoryFile. */
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#define CREDVAULT_MFD_CLOEXEC 0x0001U
#define CREDVAULT_MFD_ALLOW_SEALING 0x0002U
#define CREDVAULT_MFD_NOEXEC_SEAL 0x0008U
#define CREDVAULT_F_SEAL_SEAL 0x0001
#define CREDVAULT_F_SEAL_SHRINK 0x0002
#define CREDVAULT_F_SEAL_GROW 0x0004
#define CREDVAULT_F_SEAL_WRITE 0x0008
static inline int credvault_memfd_create(const char *name, unsigned int flags) {
    return (int)syscall(SYS_memfd_create, name, flags);
}
static inline int credvault_add_seals(int fd, int seals) { return fcntl(fd, 1033 /* F_ADD_SEALS */, seals); }
static inline int credvault_get_seals(int fd) { return fcntl(fd, 1034 /* F_GET_SEALS */); }
