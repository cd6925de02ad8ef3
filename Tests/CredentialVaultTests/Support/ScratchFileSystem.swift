import CredentialVaultTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs mounted for one test (needs root or CAP_SYS_ADMIN), for disk-full and
/// read-only faults. Unmounted when released.
final class ScratchFileSystem {
    let url: URL

    /// Whether this machine lets the tests mount a tmpfs (checked once, by trying).
    static let available: Bool = {
        let dir = TempDirectory()
        guard let fs = try? ScratchFileSystem(at: dir.path("probe"), size: "64k") else { return false }
        _ = fs
        return true
    }()

    init(at url: URL, size: String) throws {
        self.url = url
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Self.run(["mount", "-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", url.path])
    }

    deinit { try? Self.run(["umount", "-l", url.path]) }

    /// Remounts read-only (`true`) or read-write.
    func setReadOnly(_ readOnly: Bool) throws {
        try Self.run(["mount", "-o", "remount,\(readOnly ? "ro" : "rw")", url.path])
    }

    /// Fills the file system with a file until the disk is full; returns the file.
    func fill() -> URL {
        let filler = url.appendingPathComponent("filler")
        let fd = open(filler.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(fd) }
        let block = [UInt8](repeating: 0xAA, count: 4096)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress!, $0.count) }) > 0 {}
        // The last partial block too.
        while write(fd, block, 1) > 0 {}
        return filler
    }

    private static func run(_ arguments: [String]) throws {
        let run = try CLIChild.run(Array(arguments.dropFirst()), executable: URL(fileURLWithPath: "/bin/\(arguments[0])"), environment: [:])
        guard run.status == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(arguments.joined(separator: " ")) failed"])
        }
    }
}
