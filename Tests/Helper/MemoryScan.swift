import Foundation

/// glibc's memmem (a GNU extension the Glibc module does not import).
@_silgen_name("memmem")
private func glibcMemmem(_ haystack: UnsafeRawPointer, _ haystackCount: Int, _ needle: UnsafeRawPointer, _ needleCount: Int)
    -> UnsafeMutableRawPointer?

/// `scan-memory PID`: reads a secret from stdin and searches every readable mapping of process
/// PID (`/proc/PID/mem`) for its first and last 32 bytes (a freed heap block keeps its tail:
/// the allocator overwrites the first 16 bytes). Prints `hit ADDRESS KIND MAPPING` per hit, then
/// `scanned BYTES`; a hit's kind is `stack` (a thread's stack) or `other`. Mappings over 4 GiB (sanitizer shadow memory) are skipped.
/// Scanning from another process keeps the needle and the scan's own stack out of the memory
/// being scanned.
func scanMemory(_ args: [String]) {
    guard let pid = Int32(args[0]) else { fail("scan-memory: bad pid") }
    var secret = [UInt8](repeating: 0, count: 1 << 24)
    var length = 0
    while length < secret.count {
        let n = read(0, &secret[length], secret.count - length)
        if n <= 0 { break }
        length += n
    }
    guard length > 0 else { fail("scan-memory: no secret on stdin") }
    var windows = length <= 32 ? [0..<length] : [0..<32, (length - 32)..<length]
    if ProcessInfo.processInfo.environment["CREDVAULT_SCAN_ALL_WINDOWS"] != nil {
        windows = stride(from: 0, to: length - 31, by: 16).map { $0..<($0 + 32) }  // to see which parts are where
    }
    // (/proc files report size 0: read to end of file, not by size.)
    let maps = String(decoding: FileHandle(forReadingAtPath: "/proc/\(pid)/maps")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
    let fd = open("/proc/\(pid)/mem", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { fail("scan-memory: cannot open /proc/\(pid)/mem: \(String(cString: strerror(errno)))") }
    let chunk = 1 << 20
    var buffer = [UInt8](repeating: 0, count: chunk + length)
    var scanned = 0
    var hits = Set<UInt>()
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_STACK.rawValue), &limit)
    var previous: (end: UInt, perms: Substring, size: UInt)?
    for line in maps.split(separator: "\n") {
        let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
        let bounds = fields.first?.split(separator: "-").compactMap { UInt($0, radix: 16) } ?? []
        defer { if bounds.count == 2, fields.count > 1 { previous = (bounds[1], fields[1], bounds[1] - bounds[0]) } }
        guard fields.count >= 5, fields[1].hasPrefix("r") else { continue }
        // A thread's stack: "[stack]" (the main thread), or an anonymous mapping of the stack
        // size limit right above a one-page guard (pthread stacks).
        let anonymous = fields.count == 5
        let isStack =
            (fields.count > 5 && fields[5].trimmingCharacters(in: .whitespaces) == "[stack]")
            || (anonymous && bounds.count == 2 && bounds[1] - bounds[0] == UInt(limit.rlim_cur)
                && previous?.end == bounds[0] && previous?.perms == "---p" && previous?.size == 4096)
        let name = fields.count > 5 ? fields[5].trimmingCharacters(in: .whitespaces) : "[anonymous]"
        if name == "[vsyscall]" || name.hasPrefix("[vvar") { continue }
        let range = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
        guard range.count == 2, range[1] > range[0], range[1] - range[0] <= 1 << 32 else { continue }
        var offset = range[0]
        while offset < range[1] {
            let want = Int(min(UInt(buffer.count), range[1] - offset))
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, want, off_t(Int64(bitPattern: UInt64(offset)))) }
            if n <= 0 { break }
            scanned += n
            buffer.withUnsafeBytes { hay in
                secret.withUnsafeBytes { needle in
                    for window in windows {
                        var position = 0
                        while position + window.count <= n,
                            let hit = glibcMemmem(hay.baseAddress! + position, n - position, needle.baseAddress! + window.lowerBound, window.count)
                        {
                            let at = hay.baseAddress!.distance(to: UnsafeRawPointer(hit))
                            let address = offset + UInt(at)
                            if hits.insert(address).inserted { emit("hit \(String(address, radix: 16)) \(isStack ? "stack" : "other") \(name) \(fields[0]) secret-offset \(window.lowerBound)") }
                            position = at + 1
                        }
                    }
                }
            }
            if n < want { break }
            offset += UInt(chunk)
        }
    }
    emit("scanned \(scanned)")
}
