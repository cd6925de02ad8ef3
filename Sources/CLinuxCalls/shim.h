// Linux system calls that Swift's Glibc module does not declare (glibc declares them only
// under _GNU_SOURCE, or not at all) and syscall(2) is variadic, which Swift cannot call.
// Header-only: typed static inline wrappers, no library to link. Each returns -1 with errno
// set on failure (ENOSYS on a kernel without the call).
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/socket.h>

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

/* accept4(2) with SOCK_CLOEXEC | SOCK_NONBLOCK: the connection is never, even for a moment,
   inheritable by a program another thread of the process starts. */
static inline int cl_accept_cloexec_nonblock(int fd) {
    return (int)syscall(SYS_accept4, fd, (void *)0, (void *)0, SOCK_CLOEXEC | SOCK_NONBLOCK);
}

/* pipe2(2) with O_CLOEXEC | O_NONBLOCK on both ends (glibc declares pipe2 only under _GNU_SOURCE). */
static inline int cl_pipe_cloexec_nonblock(int fds[2]) {
    return (int)syscall(SYS_pipe2, fds, 02000000 /* O_CLOEXEC */ | 04000 /* O_NONBLOCK */);
}
