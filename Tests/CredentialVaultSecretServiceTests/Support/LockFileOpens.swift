import CredentialVaultTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Counts the opens of a lock file (inotify `IN_OPEN`) as they happen: a `save` or `take`
/// waiting for a held key lock opens its lock file on every attempt, so two opens after the
/// holder took it say "it is waiting for the lock now", an observation rather than a guess of
/// how long that takes. Stop it with `stop()`.
final class LockFileOpens {
    /// One arrival per open seen.
    let opens = Arrivals()
    private let source: any DispatchSourceRead

    init(_ path: String) throws {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw WatchFailure(path: path) }
        guard inotify_add_watch(fd, path, UInt32(IN_OPEN)) >= 0 else {
            close(fd)
            throw WatchFailure(path: path)
        }
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: DispatchQueue(label: "lock-file-opens"))
        source.setEventHandler { [opens] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(fd, &buffer, buffer.count)
                guard count > 0 else { return }
                // Each event is an inotify_event header and its (here empty) name.
                var offset = 0
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let nameLength = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self).len }
                    opens.arrive()
                    offset += MemoryLayout<inotify_event>.size + Int(nameLength)
                }
            }
        }
        source.setCancelHandler { close(fd) }
        source.resume()
    }

    /// Stops watching.
    func stop() { source.cancel() }

    deinit { source.cancel() }

    struct WatchFailure: Error, CustomStringConvertible {
        var path: String
        var description: String { "cannot watch \(path) with inotify (errno \(errno))" }
    }
}
