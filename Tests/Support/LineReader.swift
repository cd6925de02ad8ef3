import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads a child's output line by line as it comes (blocking the calling thread), for the
/// tests that act on a line (a helper that says it holds a lock, a server that says its port).
package final class LineReader {
    private let handle: FileHandle
    private let keepsUnfinishedLine: Bool
    private var buffer = Data()
    private var ended = false

    /// Reads `handle`. With `keepsUnfinishedLine`, text after the last newline is the last line;
    /// without, it is dropped (a process killed in the middle of a line did not say it).
    package init(_ handle: FileHandle, keepsUnfinishedLine: Bool = true) {
        self.handle = handle
        self.keepsUnfinishedLine = keepsUnfinishedLine
    }

    /// Reads the read end of `pipe`.
    package convenience init(_ pipe: Pipe, keepsUnfinishedLine: Bool = true) {
        self.init(pipe.fileHandleForReading, keepsUnfinishedLine: keepsUnfinishedLine)
    }

    /// The next line without its newline; `nil` at the end of the output, or when `limit` is
    /// given and no line came within it (a ceiling for a child that hangs, not a speed).
    package func next(within limit: Duration? = nil) -> String? {
        let deadline = limit.map { ContinuousClock.now + $0 }
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            if ended {
                guard keepsUnfinishedLine, !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            if let deadline {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return nil }
                var ready = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
                let millis = Int32(min(left.components.seconds * 1000 + 1, 20_000))
                guard poll(&ready, 1, millis) > 0 else { continue }
            }
            let chunk = handle.availableData
            if chunk.isEmpty { ended = true } else { buffer.append(chunk) }
        }
    }
}
