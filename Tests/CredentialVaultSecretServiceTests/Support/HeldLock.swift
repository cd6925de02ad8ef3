import CredentialVault
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A key's lock file held with `flock` on a descriptor of this process (to the store, another
/// holder like any process) until `release()`, which may be called from any thread, once or more.
final class HeldLock: Sendable {
    private let fd: Mutex<Int32>

    /// Takes the lock, waiting for another holder if there is one.
    init(_ path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0, flock(fd, LOCK_EX) == 0 else { throw CredentialVaultError.io("cannot lock \(path)") }
        self.fd = Mutex(fd)
    }

    /// Whether it is still held (not released yet).
    var isHeld: Bool { fd.withLock { $0 >= 0 } }

    func release() {
        fd.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    deinit { release() }
}
