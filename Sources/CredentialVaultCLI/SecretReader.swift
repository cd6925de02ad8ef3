import CredentialVault
import Foundation

/// Reads secrets (stdin, passphrase files) without leaving copies behind: the bytes go into a
/// buffer that is wiped whenever it grows, instead of through Foundation's reads, whose
/// intermediate buffers are freed unwiped.
enum SecretReader {
    /// Everything from `fd` up to `limit` bytes, in one buffer the caller wipes.
    /// Throws `UsageError` (naming `what`) when it cannot be read or is longer than `limit`.
    static func readAll(_ fd: Int32, limit: Int, what: String) throws -> Data {
        var buffer = Data(count: min(limit + 1, 65536))
        var length = 0
        while true {
            if length == buffer.count {
                guard buffer.count <= limit else { break }
                var bigger = Data(count: min(buffer.count * 2, limit + 1))
                bigger.replaceSubrange(0..<length, with: buffer)
                buffer.resetBytes(in: 0..<buffer.count)
                buffer = bigger
            }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + length, $0.count - length) }
            if n < 0 {
                if errno == EINTR { continue }
                buffer.resetBytes(in: 0..<buffer.count)
                throw UsageError("cannot read \(what): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            length += n
        }
        guard length <= limit else {
            buffer.resetBytes(in: 0..<buffer.count)
            throw UsageError("\(what) is larger than \(limit) bytes")
        }
        buffer.resetBytes(in: length..<buffer.count)
        buffer.count = length
        return buffer
    }

    /// A passphrase file: its bytes as they are, minus one trailing newline (and a CR before it).
    /// Checked exactly like a key file (`SecretFile`: no symbolic link, a regular file of this
    /// user that nobody else can access, at most 64 KiB) before anything is read.
    static func passphrase(fromFile path: String) throws -> VaultKey {
        let bytes = try SecretFile.read(path, what: "the passphrase file", limit: 65536)
        let length = bytes.withUnsafeBytes { raw in
            var length = raw.count
            if length > 0, raw[length - 1] == 0x0A { length -= 1 }
            if length > 0, raw[length - 1] == 0x0D { length -= 1 }
            return length
        }
        guard length > 0 else { throw UsageError("the passphrase file \(path) is empty") }
        return bytes.withUnsafeBytes { .passphrase(SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[..<length]))) }
    }
}
