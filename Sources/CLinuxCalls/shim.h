// Linux system calls that Swift's Glibc module does not declare (glibc declares them only
// under _GNU_SOURCE, or not at all) and syscall(2) is variadic, which Swift cannot call.
// Header-only: typed static inline wrappers, no library to link. Each returns -1 with errno
// set on failure (ENOSYS on a kernel without the call).
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>

/* renameat2's flag: fail with EEXIST instead of replacing the target. */
#define CL_RENAME_NOREPLACE 1u

static inline int cl_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags) {
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
}

/* SO_PEERPIDFD (Linux 6.5): a pidfd of the peer of a connected AF_UNIX socket. */
#define CL_SO_PEERPIDFD 77

/* A pidfd of the process `pid` (Linux 5.3), close-on-exec. */
static inline int cl_pidfd_open(int pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0u);
}
