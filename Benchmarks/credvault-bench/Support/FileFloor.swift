import CSodium
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The physical floor of one durable save: seal one value (raw libsodium), then replace a file
/// of the vault's size the durable way: write a new temp file, fsync it, rename it over the
/// target, fsync the directory. Whatever a durable, atomic, encrypted save costs beyond this
/// is the library's own overhead.
final class FileFloor {
    private let directory: String
    private let target: String
    private let contents: [UInt8]
    private let aead: RawAEAD
    private var counter = 0

    init(directory: URL, fileSize: Int, valueSize: Int) {
        self.directory = directory.path
        target = directory.appendingPathComponent("floor.bin").path
        contents = (0..<fileSize).map { _ in UInt8.random(in: 0...255) }
        aead = RawAEAD(size: valueSize)
    }

    func run() throws {
        aead.seal()
        counter += 1
        let temp = "\(directory)/.floor.tmp-\(counter)"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw BenchError("cannot create \(temp)") }
        var done = 0
        while done < contents.count {
            let n = contents.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
            guard n > 0 else {
                close(fd)
                throw BenchError("cannot write \(temp)")
            }
            done += n
        }
        guard fsync(fd) == 0, close(fd) == 0, rename(temp, target) == 0 else { throw BenchError("cannot replace \(target)") }
        let dfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dfd >= 0, fsync(dfd) == 0 else { throw BenchError("cannot fsync \(directory)") }
        close(dfd)
    }
}
