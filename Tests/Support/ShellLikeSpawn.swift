import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `posix_spawn` attributes for a child started as from a shell: an empty signal mask and the
/// default disposition of every signal, whatever the test process blocks or ignores.
package enum ShellLikeSpawn {
    /// Initialised attributes; the caller destroys them (`posix_spawnattr_destroy`).
    package static func attributes() -> posix_spawnattr_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        return attributes
    }
}
