#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// In-place reads and writes of a vault file (appending a journal entry, overwriting a
/// commit record, reading what another process appended). Every write goes through the
/// vault's lock, so no two writers ever touch the file at once; readers do not lock, which is
/// safe because committed bytes are never modified in place (only appended after, or replaced
/// as a whole file by rename) and a commit record is written only after the bytes it names.
struct InPlaceFile: ~Copyable {
    let path: String
    private let fd: Int32

    /// Opens the vault file for reading, or for reading and writing, through its directory's
    /// descriptor and checked like every private file (`PrivateFiles.open`, `Rules.vault`).
    init(_ location: FileLocation, writable: Bool) throws(CredentialVaultError) {
        path = location.path
        guard let (fd, _) = try PrivateFiles.open(location, writable: writable, rules: .vault) else {
            throw .io("the vault file \(location.path) was removed; restore it from a backup")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// The fingerprint of the file this descriptor has open.
    func fingerprint() throws(CredentialVaultError) -> AtomicFile.Fingerprint {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw PrivateFiles.error(errno, "cannot inspect \(path)") }
        return AtomicFile.Fingerprint(info)
    }

    /// Reads `count` bytes at `offset`; fewer when the file ends first.
    func read(at offset: Int, count: Int) throws(CredentialVaultError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw PrivateFiles.error(errno, "cannot read \(path)")
            }
            if n == 0 { break }
            done += n
        }
        if done < count { bytes.removeLast(count - done) }
        return bytes
    }

    /// Checks that this is still the file the caller read (`expected`'s device and inode) and
    /// that it reaches `end`: a writer appends only to the file whose commit records it just
    /// verified under the lock, and never cuts below a committed end. Returns the file's size.
    func check(expected: AtomicFile.Fingerprint, reaches end: Int) throws(CredentialVaultError) -> Int {
        let current = try fingerprint()
        guard current.device == expected.device, current.inode == expected.inode else {
            throw .reopenRequired(.replaced)
        }
        guard current.size >= Int64(end) else { throw .corrupted("truncated file: the journal ends before its last commit") }
        return Int(current.size)
    }

    /// Overwrites a commit record and makes it durable (repairing a damaged one with the state
    /// the other one and the journal give). Nothing else depends on it until it is durable.
    func repair(commitRecord: [UInt8], at offset: Int) throws(CredentialVaultError) {
        let code = write(commitRecord, at: offset)
        guard code == 0 else { throw PrivateFiles.error(code, "cannot write \(path)") }
        guard fdatasync(fd) == 0 else { throw PrivateFiles.error(errno, "cannot write \(path)") }
    }

    /// Appends `entry` at `end` (cutting the residue of an interrupted append first), makes it
    /// durable, then overwrites the commit record at `commitOffset` and makes that durable. The
    /// order is what makes it crash-safe: a commit record never names bytes that are not on disk.
    /// `end` must be a verified committed end and `size` the file's size (`check`).
    ///
    /// A failure before the commit record is written leaves the committed state as it was
    /// ("nothing was changed"); a failure to write or flush the commit record itself leaves the
    /// outcome unknown and says so.
    func commit(entry: [UInt8], at end: Int, size: Int, commitRecord: [UInt8], commitOffset: Int) throws(CredentialVaultError) {
        if size > end, ftruncate(fd, off_t(end)) != 0 {
            throw PrivateFiles.error(errno, "cannot write \(path)")
        }
        do throws(CredentialVaultError) {
            let code = write(entry, at: end)
            guard code == 0 else { throw PrivateFiles.error(code, "cannot write \(path)") }
            guard fdatasync(fd) == 0 else { throw PrivateFiles.error(errno, "cannot write \(path)") }
        } catch {
            _ = ftruncate(fd, off_t(end))  // the partial entry is only residue; give its space back
            throw error
        }
        // From here on a failure may leave the commit record written in part, which a reader
        // takes for a torn write and rolls the (durable) entry forward: say so.
        let code = write(commitRecord, at: commitOffset)
        guard code == 0 else {
            throw .io("cannot commit to \(path): \(String(cString: strerror(code))); the change may or may not be on disk")
        }
        guard fdatasync(fd) == 0 else {
            let reason = String(cString: strerror(errno))
            throw .io("cannot flush \(path): \(reason); the change may or may not be on disk")
        }
    }

    /// Writes all of `bytes` at `offset`; 0, or the errno of the failure.
    private func write(_ bytes: [UInt8], at offset: Int) -> Int32 {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, $0.count - done, off_t(offset + done)) }
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            done += n
        }
        return 0
    }
}

extension PrivateFiles.Rules {
    /// A vault file: at most `VaultFile.maxSize` bytes, a single name (one lock), and read only
    /// once its header (magic, version and the rest of its fixed fields) checks out.
    static let vault = PrivateFiles.Rules(
        limit: VaultFile.maxSize, singleName: true,
        prefix: PrivateFiles.Prefix(count: VaultHeader.size) { (bytes) throws(CredentialVaultError) in _ = try VaultHeader.decode(bytes: bytes) })
}
