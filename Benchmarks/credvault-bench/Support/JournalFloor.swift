import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The physical floor of a save in format 3's design: seal one value (raw libsodium), append
/// an entry of the size a save appends at the end of a file of the vault's size, `fdatasync`,
/// overwrite an 88-byte commit record at offset 4096, `fdatasync`. What a save costs beyond this
/// is the library's own overhead (lock file, catching up with the file, encoding, MACs).
final class JournalFloor {
    private let fd: Int32
    private let entry: [UInt8]
    private let commit = [UInt8](repeating: 0xC0, count: 88)
    private let aead: RawAEAD
    private var end: Int
    private let start: Int

    init(directory: URL, fileSize: Int, entrySize: Int, valueSize: Int) throws {
        let path = directory.appendingPathComponent("journal-floor.bin").path
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw BenchError("cannot create \(path)") }
        let contents = (0..<max(fileSize, 8192)).map { _ in UInt8.random(in: 0...255) }
        guard contents.withUnsafeBytes({ pwrite(fd, $0.baseAddress!, $0.count, 0) }) == contents.count, fsync(fd) == 0 else {
            close(fd)
            throw BenchError("cannot write \(path)")
        }
        self.fd = fd
        start = contents.count
        end = start
        entry = (0..<entrySize).map { _ in UInt8.random(in: 0...255) }
        aead = RawAEAD(size: valueSize)
    }

    deinit { close(fd) }

    func run() throws {
        aead.seal()
        if end - start > 1 << 20 {  // keep the file about the vault's size
            guard ftruncate(fd, off_t(start)) == 0 else { throw BenchError("cannot truncate the journal floor") }
            end = start
        }
        guard entry.withUnsafeBytes({ pwrite(fd, $0.baseAddress!, $0.count, off_t(end)) }) == entry.count, fdatasync(fd) == 0,
            commit.withUnsafeBytes({ pwrite(fd, $0.baseAddress!, $0.count, 4096) }) == commit.count, fdatasync(fd) == 0
        else { throw BenchError("cannot write the journal floor") }
        end += entry.count
    }
}
