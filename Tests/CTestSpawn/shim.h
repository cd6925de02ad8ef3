// What the tests' process spawners need from glibc that it declares only under _GNU_SOURCE
// (which Swift's Glibc module does not define): pipes close-on-exec from birth, and closing
// every descriptor from 3 up in a spawned child. Header-only: no library to link.
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

static inline int cts_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
static inline int cts_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}
