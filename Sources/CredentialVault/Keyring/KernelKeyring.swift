#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CKeyctl

#if canImport(Glibc)
import Glibc
#endif

/// The Linux kernel keyring's few operations a key cache needs, as raw syscalls (`CKeyctl`):
/// `user` keys in the user keyring `@u` (one per uid, shared by all of its sessions).
///
/// The payload goes to the kernel through a pointer (never through a command line, as
/// `keyctl add` would put it), and comes back straight into guarded memory.
package enum KernelKeyring {
    /// possessor: everything; user (the same uid in any session keyring): view, read, search;
    /// group and others: nothing. The default (0x3f010000) lets only possessors read, and a
    /// process in another session keyring (a systemd service, `keyctl session`, a pam_keyinit
    /// login) does not possess `@u`'s keys: it would get EACCES.
    package static let userReadable: UInt32 = 0x3f0b_0000

    /// The largest payload the kernel accepts for a `user` key.
    package static let maximumPayload = 32767

    /// Adds `payload` as the `user` key `description` in `@u`, readable by this uid only,
    /// expiring `seconds` from now (by the kernel), replacing a key of the same description.
    /// Returns its id.
    ///
    /// The key is made in the process keyring first and gets its permissions and timeout there;
    /// only then is it linked into `@u` (displacing an older key of that description). A process
    /// killed in between leaves nothing in `@u`: the process keyring dies with it. A key without
    /// a timeout never reaches `@u`.
    package static func add(_ payload: SecureBytes, description: String, seconds: UInt32) throws(CredentialVaultError) -> Int32 {
        guard payload.count > 0, payload.count <= maximumPayload else {
            throw .invalidArgument("a kernel keyring key holds 1 to \(maximumPayload) bytes, not \(payload.count)")
        }
        guard seconds > 0 else { throw .invalidArgument("a cached key needs a timeout of at least one second") }
        let id = payload.withUnsafeBytes { ck_add_key("user", description, $0.baseAddress, $0.count, CK_PROCESS_KEYRING) }
        guard id >= 0 else { throw error(errno, "add_key") }
        // From here on the key must not outlive a failure.
        do throws(CredentialVaultError) {
            guard ck_setperm(id, userReadable) == 0 else { throw error(errno, "KEYCTL_SETPERM") }
            guard ck_set_timeout(id, seconds) == 0 else { throw error(errno, "KEYCTL_SET_TIMEOUT") }
            guard ck_link(id, CK_USER_KEYRING) == 0 else { throw error(errno, "KEYCTL_LINK") }
        } catch {
            _ = ck_invalidate(id)
            throw error
        }
        _ = ck_unlink(id, CK_PROCESS_KEYRING)
        return id
    }

    /// The id of the `user` key `description` in `@u`; `nil` when there is none (or it expired,
    /// was revoked or invalidated).
    package static func search(description: String) throws(CredentialVaultError) -> Int32? {
        let id = ck_search(CK_USER_KEYRING, "user", description, 0)
        guard id >= 0 else {
            let code = errno
            if isGone(code) { return nil }
            throw error(code, "KEYCTL_SEARCH")
        }
        guard let key = Int32(exactly: id) else { throw .io("the kernel returned an out-of-range key id") }
        return key
    }

    /// The payload of key `id`, read straight into guarded memory; `nil` when it is gone.
    package static func read(id: Int32) throws(CredentialVaultError) -> SecureBytes? {
        // The size first (KEYCTL_READ returns it whatever the buffer), then the bytes. A key
        // updated in between may have another size: then read again (bounded).
        for _ in 0..<4 {
            let size = ck_read(id, nil, 0)
            guard size >= 0 else {
                let code = errno
                if isGone(code) { return nil }
                throw error(code, "KEYCTL_READ")
            }
            guard size > 0, size <= maximumPayload else { throw .corrupted("the cached key has \(size) bytes") }
            let buffer = SecureBytes(count: Int(size))
            let read = buffer.withUnsafeMutableBytes { ck_read(id, $0.baseAddress, $0.count) }
            guard read >= 0 else {
                let code = errno
                if isGone(code) { return nil }
                throw error(code, "KEYCTL_READ")
            }
            if read == size { return buffer }
        }
        throw .io("the cached key kept changing while it was read; retry")
    }

    /// Invalidates key `id` at once (for every process); no error when it is gone already.
    package static func invalidate(id: Int32) throws(CredentialVaultError) {
        guard ck_invalidate(id) == 0 else {
            let code = errno
            if isGone(code) { return }
            throw error(code, "KEYCTL_INVALIDATE")
        }
    }

    /// The errors that mean "no such key (any more)".
    private static func isGone(_ code: Int32) -> Bool {
        code == ENOKEY || code == EKEYEXPIRED || code == EKEYREVOKED
    }

    /// A typed error for a failed keyring syscall. ENOSYS and EPERM from the keyring syscalls
    /// mean that they are refused outright (a seccomp filter such as Docker's default profile, a
    /// kernel without CONFIG_KEYS): `notAvailable`, so that a cache can be left off.
    private static func error(_ code: Int32, _ call: String) -> CredentialVaultError {
        let reason = String(cString: strerror(code))
        switch code {
        case ENOSYS, EPERM:
            return .notAvailable("the kernel keyring is not available here (\(call): \(reason)); a seccomp filter (containers) or a kernel without keys refuses it")
        case EACCES: return .permissionDenied("the kernel keyring refused \(call): \(reason)")
        case EDQUOT, ENOMEM:
            return .io("the kernel keyring is full for this user (\(call): \(reason)); see /proc/sys/kernel/keys/maxkeys and maxbytes")
        default: return .io("kernel keyring \(call): \(reason)")
        }
    }
}
