// What the tests' process spawners need from glibc that it declares only under _GNU_SOURCE:
// pipes close-on-exec from birth (pipe2), and closing every descriptor from 3 up in a spawned
// child (posix_spawn_file_actions_addclosefrom_np, glibc 2.34); and setxattr, which Swift's
// Glibc module leaves out (tests write POSIX ACLs with it, no setfacl needed). Declared here rather than
// through _GNU_SOURCE: headers seen with other macros than in the other modules (Dispatch's)
// give clashing definitions (fd_set) in Clang's module cache. Header-only: no library to link.
#include <fcntl.h>
#include <spawn.h>

extern int pipe2(int fds[2], int flags);
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int lowest);
extern int setxattr(const char *path, const char *name, const void *value, size_t size, int flags);

static inline int cts_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
static inline int cts_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}
