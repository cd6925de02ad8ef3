import Foundation
import CTestSpawn
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// A vault's directory may be listed by other users (0755, as systemd's `StateDirectory=`
/// makes it), never written by them. What another user (nobody, through setpriv) can and
/// cannot do there, and POSIX ACLs, whose grants to other users show in the group bits (the
/// mask): a grant of write is refused, a mask that takes the write away is accepted.
@Suite(.ownThread) final class VaultDirectoryOtherUserTests {
    let dir = TempDirectory()
    static let canActAsNobody = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    /// Runs `script` with /bin/sh as nobody; its stdout, one word per attempt.
    private func asNobody(_ script: String) throws -> String {
        let outcome = try CLIChild.run(
            ["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c", script],
            executable: URL(fileURLWithPath: "/usr/bin/setpriv"), environment: ["PATH": "/usr/bin:/bin"])
        return outcome.stdoutText
    }

    /// A vault and its lock file in a 0755 directory: nobody sees their names and cannot
    /// open either, create a file beside them, or give the vault a second name.
    @Test(.enabled(if: canActAsNobody, "needs root and setpriv to act as nobody"))
    func anotherUserListsTheDirectoryButOpensAndChangesNothing() throws {
        chmod(dir.url.path, 0o711)
        let store = try TestVault.create(dir)
        try store.save(Data("v".utf8), for: CredentialKey(service: "s", account: "a"), options: .portable)
        let directory = store.url.deletingLastPathComponent().path
        #expect(chmod(directory, 0o755) == 0)
        let vault = store.url.path
        let seen = try asNobody(
            """
            ls '\(directory)' | tr '\\n' ' '
            cat '\(vault)' >/dev/null 2>&1 && echo read-vault || echo no-read-vault
            cat '\(vault).lock' >/dev/null 2>&1 && echo read-lock || echo no-read-lock
            touch '\(directory)/planted' 2>/dev/null && echo planted || echo no-plant
            ln '\(vault)' /tmp/cv-nobody-link-$$ 2>/dev/null && { rm -f /tmp/cv-nobody-link-$$; echo linked; } || echo no-link
            """)
        #expect(seen.hasPrefix("test.cvault test.cvault.lock"), "\(seen)")
        #expect(seen.contains("no-read-vault") && seen.contains("no-read-lock") && seen.contains("no-plant"), "\(seen)")
        // A second name would make every open refuse the vault; the kernel refuses it to a user
        // who can neither read nor write the file while fs.protected_hardlinks is 1.
        let protectedHardlinks = (try? String(contentsOfFile: "/proc/sys/fs/protected_hardlinks", encoding: .utf8))?.hasPrefix("1") ?? false
        if protectedHardlinks { #expect(seen.contains("no-link"), "\(seen)") }
        let reopened = try SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        #expect(try reopened.load(CredentialKey(service: "s", account: "a")) == Data("v".utf8))
    }

    /// An access ACL (`setfacl -m u:nobody:rwx`) written as the kernel's extended attribute:
    /// the entries for the owner, nobody, the group, the mask and others.
    private func grantNobodyEverything(_ path: String, mask: UInt16) -> Bool {
        var bytes: [UInt8] = []
        func put<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        put(UInt32(2))  // POSIX_ACL_XATTR_VERSION
        let undefined = UInt32.max
        for (tag, permissions, id) in [(UInt16(0x01), UInt16(7), undefined), (0x02, 7, 65534), (0x04, 5, undefined), (0x10, mask, undefined), (0x20, 5, undefined)] {
            put(tag)
            put(permissions)
            put(id)
        }
        return setxattr(path, "system.posix_acl_access", bytes, bytes.count, 0) == 0
    }

    @Test(.enabled(if: canActAsNobody, "needs root and setpriv to act as nobody"))
    func anACLGrantingAnotherUserWriteIsRefusedAndAMaskWithoutWriteIsAccepted() throws {
        chmod(dir.url.path, 0o711)
        let store = try TestVault.create(dir)
        let directory = store.url.deletingLastPathComponent().path
        guard grantNobodyEverything(directory, mask: 7) else {
            print("no POSIX ACLs on this file system (\(String(cString: strerror(errno)))): nothing to check")
            return
        }
        var info = stat()
        #expect(stat(directory, &info) == 0 && info.st_mode & 0o777 == 0o775, "the mask shows as the group bits")
        #expect(try asNobody("touch '\(directory)/planted' 2>/dev/null && echo planted") == "planted\n", "the ACL lets nobody write")
        unlink("\(directory)/planted")
        expectThrows(\CredentialVaultError.isPermissionDenied) { try LockedVault(url: store.url) }
        // `chmod g-w` lowers the mask: nobody's entry stays rwx but is worth r-x.
        #expect(chmod(directory, 0o755) == 0)
        #expect(try asNobody("touch '\(directory)/planted' 2>/dev/null && echo planted || echo refused") == "refused\n")
        _ = try LockedVault(url: store.url)
    }
}
