import CredentialVaultTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A test secret that the test itself never keeps in the clear, so that a memory scan finds
/// only the copies others made: it holds a random mask and the masked bytes, and puts the
/// secret only into buffers the caller asks for (and wipes).
struct MaskedSecret: Sendable {
    private let mask: [UInt8]
    private let masked: [UInt8]

    /// `count` random lowercase hex characters (valid UTF-8, so it also works as a String).
    /// Small heap blocks are reused within moments of being freed, so a forgotten temporary
    /// of 48 bytes is often overwritten before a scan; one of 512 bytes reliably is not.
    init(count: Int = 512) {
        let alphabet = Array("0123456789abcdef".utf8)
        var mask: [UInt8] = []
        var masked: [UInt8] = []
        for _ in 0..<count {
            let m = UInt8.random(in: 1...255)
            mask.append(m)
            masked.append(alphabet[Int.random(in: 0..<16)] ^ m)
        }
        self.mask = mask
        self.masked = masked
    }

    var count: Int { mask.count }

    /// The parts a scan looks for: the first and the last 32 bytes. A freed heap block has
    /// its first 16 bytes overwritten by the allocator's free-list pointers, so a remnant of
    /// a 48-byte secret there still shows its tail.
    var windows: [Range<Int>] { count <= 32 ? [0..<count] : [0..<32, (count - 32)..<count] }

    /// Writes the secret into `buffer` (exactly `count` bytes).
    func reveal(into buffer: UnsafeMutableRawBufferPointer) {
        for i in 0..<count { buffer[i] = masked[i] ^ mask[i] }
    }

    /// Writes the secret to `fd` from a private page that is wiped and unmapped right after,
    /// so the writer keeps no copy in its heap.
    func write(to fd: Int32) {
        let page = mmap(nil, count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)!
        reveal(into: UnsafeMutableRawBufferPointer(start: page, count: count))
        var written = 0
        while written < count {
            let n = Glibc.write(fd, page + written, count - written)
            if n <= 0 { break }
            written += n
        }
        memset(page, 0, count)
        munmap(page, count)
    }

    /// A new `Data` holding the secret; the caller wipes it with `wipe(_:)`.
    func data() -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { reveal(into: $0) }
        return data
    }

    /// A new heap-allocated String holding the secret; the caller wipes it with `wipe(_:)`.
    func string() -> String {
        String(unsafeUninitializedCapacity: count) { buffer in
            reveal(into: UnsafeMutableRawBufferPointer(buffer))
            return count
        }
    }

    /// Whether `bytes` starts with the secret's `window` (the whole secret by default).
    fileprivate func matches(_ bytes: UnsafeRawPointer, window: Range<Int>? = nil) -> Bool {
        let window = window ?? 0..<count
        for (offset, i) in window.enumerated() where bytes.load(fromByteOffset: offset, as: UInt8.self) ^ mask[i] != masked[i] {
            return false
        }
        return true
    }

    /// Whether `text` contains the secret (for logs, messages, descriptions).
    func occurs(in text: String) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            guard utf8.count >= count else { return false }
            return (0...(utf8.count - count)).contains { matches(UnsafeRawPointer(utf8.baseAddress! + $0)) }
        }
    }

    /// Whether `text` shows the secret as text or as hex (of its bytes).
    func leaks(into text: String) -> Bool {
        if occurs(in: text) { return true }
        var bytes = Data(count: count)
        defer { wipe(&bytes) }
        bytes.withUnsafeMutableBytes { reveal(into: $0) }
        var hex = bytes.map { String(format: "%02x", $0) }.joined()
        defer { wipe(&hex) }
        return text.lowercased().contains(hex)
    }

    func occurs(in data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            guard raw.count >= count else { return false }
            return (0...(raw.count - count)).contains { matches(raw.baseAddress! + $0) }
        }
    }
}

/// Overwrites a `Data` in place.
func wipe(_ data: inout Data) { data.resetBytes(in: 0..<data.count) }

/// Overwrites a String's storage in place: the test's own copy of a secret must not be what a
/// scan finds. (Only for native strings longer than 15 bytes, which live in the heap.)
func wipe(_ string: inout String) {
    string.withUTF8 { utf8 in
        if let base = utf8.baseAddress { memset(UnsafeMutableRawPointer(mutating: base), 0x2E, utf8.count) }
    }
}

/// Scans a process's readable memory for a secret, from a helper process
/// (`credvault-testhelper scan-memory`), so that neither the needle nor the scan's own buffers
/// and stack frames are in the memory being scanned. The secret goes to the helper through a
/// pipe from a page that is wiped and unmapped before the scan starts.
///
/// Hits in threads' stacks are reported apart: dead stack frames keep whatever the compiler
/// and the standard library put there (measured: making a 512-byte String from its bytes leaves
/// 64-byte pieces of it below the caller, with no library involved), and Swift offers no way to
/// wipe them. The promise covers heap, guarded memory and everything else.
enum MemoryScanner {
    struct Hit: CustomStringConvertible {
        var address: UInt
        var onStack: Bool
        var mapping: String
        var description: String { "0x\(String(address, radix: 16)) in \(mapping)" }
    }

    struct Report: CustomStringConvertible {
        var all: [Hit] = []
        var bytesScanned = 0
        var failure: String?
        /// Copies outside thread stacks: heap, guarded memory, globals.
        var hits: [Hit] { all.filter { !$0.onStack } }
        /// Pieces in threads' stacks (dead frames, out of a Swift library's control).
        var stackHits: [Hit] { all.filter(\.onStack) }
        var description: String {
            failure ?? "\(hits.count) hits (\(hits.prefix(6))), \(stackHits.count) on stacks, in \(bytesScanned >> 20) MiB scanned"
        }
    }

    static func scan(for secret: MaskedSecret, pid: pid_t = getpid()) -> Report {
        let process = Process()
        process.executableURL = BuiltProducts.helper
        process.arguments = ["scan-memory", "\(pid)"]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        do { try process.run() } catch { return Report(failure: "cannot start the scanner: \(error)") }
        secret.write(to: input.fileHandleForWriting.fileDescriptor)
        try? input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let problems = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return Report(failure: "the scanner failed: \(problems)") }
        var report = Report()
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 3)
            if fields.first == "hit", fields.count == 4, let address = UInt(fields[1], radix: 16) {
                report.all.append(Hit(address: address, onStack: fields[2] == "stack", mapping: String(fields[3])))
            } else if fields.first == "scanned", fields.count == 2 {
                report.bytesScanned = Int(fields[1]) ?? 0
            }
        }
        return report
    }

    /// The whole of a /proc file (they report size 0: read to end of file, not by size).
    static func readProcFile(_ path: String) -> String {
        String(decoding: FileHandle(forReadingAtPath: path)?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
    }
}
