#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CSodium

#if canImport(Glibc)
import Glibc
#endif

/// An anonymous file in memory holding one secret, for a program that reads its secrets from a
/// file (`credvault exec --fd`): `memfd_create`, so it is never on any file system (no path,
/// nothing on disk, gone with its last descriptor), then sealed against every change (no
/// write, no shrink, no growth, no new seal) and, where the kernel can (Linux 6.3+), against
/// execution. The descriptor is close-on-exec until its owner chooses to hand it on.
///
/// Its pages are ordinary shared memory: like any memory of the process, they may be swapped.
package enum SealedMemoryFile {
    /// The seals every file gets, and which `create` checks are in place.
    package static let seals: Int32 =
        CREDVAULT_F_SEAL_SEAL | CREDVAULT_F_SEAL_SHRINK | CREDVAULT_F_SEAL_GROW | CREDVAULT_F_SEAL_WRITE

    /// A new sealed file holding exactly `contents`, positioned at its start; its descriptor,
    /// close-on-exec, which the caller owns. `name` shows only in `/proc/PID/fd` links
    /// (`/memfd:NAME (deleted)`), never the contents; it is cut to 200 bytes. Throws `io` when
    /// the kernel refuses any step (nothing is left open then).
    package static func create(name: String, contents: UnsafeRawBufferPointer) throws(CredentialVaultError) -> Int32 {
        let label = String(decoding: Array(name.utf8.prefix(200)).filter { $0 != 0 }, as: UTF8.self)
        let flags = CREDVAULT_MFD_CLOEXEC | CREDVAULT_MFD_ALLOW_SEALING
        var fd = credvault_memfd_create(label, flags | CREDVAULT_MFD_NOEXEC_SEAL)
        // Before Linux 6.3 MFD_NOEXEC_SEAL is unknown (EINVAL): the file is then only sealed.
        if fd < 0 && errno == EINVAL { fd = credvault_memfd_create(label, flags) }
        guard fd >= 0 else { throw .io("cannot create an in-memory file (memfd_create): \(describe(errno))") }
        do throws(CredentialVaultError) {
            try writeAll(fd, contents)
            guard credvault_add_seals(fd, seals) == 0 else { throw .io("cannot seal the in-memory file: \(describe(errno))") }
            guard credvault_get_seals(fd) & seals == seals else { throw .io("the in-memory file did not keep its seals") }
            guard lseek(fd, 0, SEEK_SET) == 0 else { throw .io("cannot rewind the in-memory file: \(describe(errno))") }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Writes every byte, retrying after `EINTR` and partial writes.
    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(CredentialVaultError) {
        var done = 0
        while done < bytes.count {
            let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw .io("cannot write the in-memory file: \(describe(n < 0 ? errno : EIO))") }
            done += n
        }
    }

    private static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}
