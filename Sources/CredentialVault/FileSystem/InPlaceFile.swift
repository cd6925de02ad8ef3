import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// In-place reads and writes of a format-3 vault file (appending a journal entry, overwriting a
/// commit record, reading what another process appended). Every write goes through the
/// vault's lock, so no two writers ever touch the file at once; readers do not lock, which is
/// safe because committed bytes are never modified in place (only appended after, or replaced
/// as a whole file by rename) and a commit record is written only after the bytes it names.
struct InPlaceFile: ~Copyable {
    let path: String
    private let fd: Int32

    /// Opens the vault file for reading, or for reading and writing.
    init(_ path: String, writable: Bool) throws(CredentialVaultError) {
        self.path = path
        fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC)
        guard fd >= 0 else { throw PrivateFiles.error(errno, "cannot open \(path)") }
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

    /// Appends `entry` at `end` (cutting the residue of an interrupted append first), makes it
    /// durable, then overwrites the commit record at `commitOffset` and makes that durable. The
    /// order is what makes it crash-safe: a commit record never names bytes that are not on disk.
    ///
    /// A failure before the commit record is written leaves the committed state as it was
    /// ("nothing was changed"); a failure to flush the commit record itself leaves the outcome
    /// unknown and says so.
    func commit(entry: [UInt8], at end: Int, commitRecord: [UInt8], commitOffset: Int, generation: UInt64) throws(CredentialVaultError) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw PrivateFiles.error(errno, "cannot inspect \(path)") }
        if Int(info.st_size) != end, ftruncate(fd, off_t(end)) != 0 {
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
        markChanged(generation: generation)
    }

    /// Gives the file a modification time no earlier version had. Readers notice another
    /// process's writes by the file's (inode, size, mtime, ctime); a commit record overwrite does
    /// not change the size, and two writes within one clock tick (ext4's timestamps move in
    /// ticks of several milliseconds) would otherwise leave the fingerprint as it was.
    private func markChanged(generation: UInt64) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let times = [timespec(tv_sec: 0, tv_nsec: Self.utimeOmit), timespec(tv_sec: now.tv_sec, tv_nsec: Int(generation % 1_000_000_000))]
        _ = futimens(fd, times)
    }

    /// `UTIME_OMIT` from <sys/stat.h> (a macro Swift does not import): leave that time alone.
    private static let utimeOmit = (1 << 30) - 2

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
