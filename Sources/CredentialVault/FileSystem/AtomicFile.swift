#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif
import CLinuxCalls

/// Durable, atomic replacement of a file: write a uniquely named temp file (0600) in the same
/// directory, fsync it, rename it over the target, fsync the directory, every step through the
/// directory's descriptor (`FileLocation`). A reader sees the old or the new file, never a mix;
/// after a crash the file is the old or the new one, and once this returns the new one
/// survives power loss. A rename never replaces a symbolic link or a file with other hard
/// links (that would leave the link's target, or the other name, with the old content).
package enum AtomicFile {
    /// Writes `bytes` as the new content of `location` (a new file, or one replacing a regular
    /// file with a single name; anything else is refused and left as it was). With `lock` (the
    /// vault lock the caller holds), the new file is locked before it takes the name and the
    /// lock then holds it (`VaultLock.adopt`): the file with the vault's name is never unlocked
    /// while its writer holds the vault lock. With `expected` (the file the writer read under
    /// its lock), the name must still be that file (device and inode) just before the rename:
    /// a file put there meanwhile (a restore from a backup, another tool) is never replaced.
    static func write(
        _ bytes: [UInt8], to location: FileLocation, replacing expected: Fingerprint? = nil, lock: VaultLock? = nil
    ) throws(CredentialVaultError) {
        let directory = location.directoryFD
        let newLock = try place(bytes, at: location, locked: lock != nil) { (temp) throws(CredentialVaultError) in
            try checkReplaceable(location, expected: expected)
            guard renameat(directory, temp, directory, location.name) == 0 else {
                throw PrivateFiles.error(errno, "cannot replace \(location.path)")
            }
        }
        if let lock, let newLock { lock.adopt(newLock) }
        try location.directory?.sync()
    }

    /// Writes `bytes` as the new content of `location` like `write`, with `check` run just before
    /// the rename (the temp file complete and durable): a writer that shares the file with
    /// programs that take no lock makes sure there that the file is still the version it read,
    /// and throws to leave it untouched (the temp file is removed). For libsecret's keyring file.
    package static func replace(
        _ bytes: [UInt8], at location: FileLocation, unless check: () throws(CredentialVaultError) -> Void
    ) throws(CredentialVaultError) {
        let directory = location.directoryFD
        _ = try place(bytes, at: location, locked: false) { (temp) throws(CredentialVaultError) in
            try check()
            try checkReplaceable(location, expected: nil)
            guard renameat(directory, temp, directory, location.name) == 0 else {
                throw PrivateFiles.error(errno, "cannot replace \(location.path)")
            }
        }
        try location.directory?.sync()
    }

    /// Creates `location` with `bytes`, durably, and never replaces anything: the complete temp
    /// file is renamed to the name with `renameat2(RENAME_NOREPLACE)`, which fails when the name
    /// exists, so that the file never has two names, even after a power cut. Where the file
    /// system or the kernel has no such rename, it is hard-linked to the name (`linkat`, which
    /// also fails when the name exists) and the temp name removed; a crash between the two leaves
    /// the temp name, which the next open removes (`removeCreationLeftovers`). Returns `false`,
    /// having changed nothing, when something already has the name (another process created it
    /// first, or a file appeared since the caller looked). A reader never sees the file
    /// incomplete, and after a crash it is whole or absent.
    package static func create(_ bytes: [UInt8], at location: FileLocation) throws(CredentialVaultError) -> Bool {
        let directory = location.directoryFD
        var created = true
        _ = try place(bytes, at: location, locked: false) { (temp) throws(CredentialVaultError) in
            if cl_renameat2(directory, temp, directory, location.name, CL_RENAME_NOREPLACE) == 0 { return }
            guard errno == EINVAL || errno == ENOSYS else {
                guard errno == EEXIST else { throw PrivateFiles.error(errno, "cannot create \(location.path)") }
                created = false
                return
            }
            guard linkat(directory, temp, directory, location.name, 0) == 0 else {
                guard errno == EEXIST else { throw PrivateFiles.error(errno, "cannot create \(location.path)") }
                created = false
                return
            }
        }
        if created { try location.directory?.sync() }
        return created
    }

    /// Writes `bytes` to a new uniquely named temp file (0600) beside `location`, fsyncs it,
    /// and hands its name to `install` (which gives it the final name); the temp name is
    /// removed afterwards in every case. With `locked`, the temp file is locked before
    /// `install` and the lock (owning its descriptor) returned; else the descriptor is closed.
    private static func place(
        _ bytes: [UInt8], at location: FileLocation, locked: Bool, install: (String) throws(CredentialVaultError) -> Void
    ) throws(CredentialVaultError) -> FileLock? {
        let directory = location.directoryFD
        let suffix = PlainText.hex(Crypto.randomBytes(8))
        let temp = "\(temporaryPrefix(of: location.name))\(getpid())-\(suffix)"
        let fd = openat(directory, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        // Messages name the file the caller knows, not the temp file.
        let place = location.directory?.path ?? "its directory"
        guard fd >= 0 else { throw PrivateFiles.error(errno, "cannot write a new version of \(location.path) in \(place)") }
        defer { unlinkat(directory, temp, 0) }  // after a rename the name is gone already: a no-op
        var closed = false
        var newLock: FileLock?
        do throws(CredentialVaultError) {
            try writeAll(fd, bytes, what: "cannot write \(location.path)")
            guard fsync(fd) == 0 else { throw PrivateFiles.error(errno, "cannot write \(location.path)") }
            if locked {
                // The lock owns (and closes) the descriptor from here on.
                guard let lock = FileLock.lockNew(fd) else { throw PrivateFiles.error(errno, "cannot lock \(location.path)") }
                newLock = lock
                closed = true
            } else {
                closed = true
                guard close(fd) == 0 else { throw PrivateFiles.error(errno, "cannot write \(location.path)") }
            }
            try install(temp)
        } catch {
            if !closed { close(fd) }
            newLock?.release()
            throw error
        }
        return newLock
    }

    /// What a rename may replace: nothing, or a regular file with a single name; with
    /// `expected`, only that very file (device and inode).
    private static func checkReplaceable(_ location: FileLocation, expected: Fingerprint?) throws(CredentialVaultError) {
        guard let info = try location.status() else {
            guard expected == nil else {
                throw .io("\(location.path) was removed while it was locked for writing; nothing was written: restore it or open it again")
            }
            return
        }
        if let expected, UInt64(info.st_dev) != expected.device || UInt64(info.st_ino) != expected.inode {
            // Not overwritten: a restore from a backup, or another vault, took the name.
            throw .reopenRequired(.replaced)
        }
        if info.st_mode & S_IFMT == S_IFLNK {
            throw .invalidArgument("\(location.path) was replaced by a symbolic link; it was not overwritten (nothing was changed)")
        }
        guard info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else {
            throw .invalidArgument(
                "\(location.path) is no longer a regular file with a single name; it was not overwritten (nothing was changed)")
        }
    }

    /// The prefix of the temp files `write` makes for the file `name`.
    static func temporaryPrefix(of name: String) -> String { ".\(name).tmp-" }

    /// Removes temp files that writers of `location` killed mid-write left behind (SIGKILL,
    /// power loss): they hold only ciphertext, but would pile up. Only call this while holding
    /// the lock that every writer of `location` holds: then no temp file can belong to a live
    /// write. Returns how many were removed.
    @discardableResult
    static func removeStaleTemporaries(of location: FileLocation) -> Int {
        guard let directory = location.directory else { return 0 }
        let prefix = temporaryPrefix(of: location.name)
        var removed = 0
        for name in directory.names() where name.hasPrefix(prefix) && isTemporarySuffix(name.dropFirst(prefix.count)) {
            if unlinkat(directory.fd, name, 0) == 0 { removed += 1 }
        }
        return removed
    }

    /// Removes the second name a `create` killed between its link and its unlink (a power cut,
    /// SIGKILL) leaves on the file it made: a temp name of `location` (`removeStaleTemporaries`'
    /// pattern) that is the very file `info` describes (device and inode). Without this, the
    /// vault it created has two names and every open refuses it. Removing that name is safe
    /// with or without the vault lock: it names the same file, no writer ever reads through it,
    /// and a live `create` that still has it only fails to remove it once more. A second name of
    /// any other form is left alone (and refused by the single-name check). Returns how many names
    /// were removed.
    @discardableResult
    static func removeCreationLeftovers(of location: FileLocation, sameFileAs info: stat) -> Int {
        guard let directory = location.directory else { return 0 }
        let prefix = temporaryPrefix(of: location.name)
        var removed = 0
        for name in directory.names() where name.hasPrefix(prefix) && isTemporarySuffix(name.dropFirst(prefix.count)) {
            var other = stat()
            guard fstatat(directory.fd, name, &other, AT_SYMLINK_NOFOLLOW) == 0, other.st_mode & S_IFMT == S_IFREG,
                other.st_dev == info.st_dev, other.st_ino == info.st_ino
            else { continue }
            if unlinkat(directory.fd, name, 0) == 0 { removed += 1 }
        }
        return removed
    }

    /// `PID-HEX16` exactly, so that the temp files of a vault whose name merely starts with
    /// this one's (`a.cvault.tmp-x`) are never taken for this vault's.
    private static func isTemporarySuffix(_ suffix: Substring) -> Bool {
        let parts = suffix.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy({ $0.isASCII && $0.isNumber }), parts[1].count == 16 else { return false }
        return parts[1].allSatisfy { $0.isASCII && $0.isHexDigit }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], what: String) throws(CredentialVaultError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw PrivateFiles.error(errno, what)
            }
            done += n
        }
    }

    /// Identifies one version of a file: a rename gives a new inode, and size and times change
    /// with every write, so an unchanged fingerprint means an unchanged file.
    package struct Fingerprint: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: timespec
        var changed: timespec

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = info.st_mtim
            changed = info.st_ctim
        }

        package static func == (a: Fingerprint, b: Fingerprint) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
                && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
        }
    }

    /// The fingerprint of what has the name (a link is not followed), or `nil` when nothing has.
    static func fingerprint(_ location: FileLocation) -> Fingerprint? {
        (try? location.status())?.map(Fingerprint.init)
    }
}
