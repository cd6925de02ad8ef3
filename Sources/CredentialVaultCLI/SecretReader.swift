import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Reads secrets (stdin, passphrase files) without leaving copies behind: the bytes go into a
/// buffer that is wiped whenever it grows, instead of through Foundation's reads, whose
/// intermediate buffers are freed unwiped.
package enum SecretReader {
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
    package static func passphrase(fromFile path: String) throws -> VaultSecret {
        try withSecretFile(path, what: "passphrase") { .passphrase(SecureBytes(copying: $0)) }
    }

    /// The bytes of another secret file (a password an API takes as bytes), in guarded memory,
    /// checked and trimmed like a passphrase file.
    package static func bytes(fromFile path: String, what: String) throws -> SecureBytes {
        try withSecretFile(path, what: what) { SecureBytes(copying: $0) }
    }

    /// The text of another secret file (a client secret, a password, a code: what an API takes
    /// as a `String`), checked and trimmed like a passphrase file; refused when not UTF-8.
    package static func text(fromFile path: String, what: String) throws -> String {
        try withSecretFile(path, what: what) { bytes in
            guard let text = String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) else {
                throw UsageError("the \(what) file \(path) is not UTF-8 text")
            }
            return text
        }
    }

    /// Reads a secret file (`SecretFile`: no symbolic link, a regular file of this user that
    /// nobody else can access, at most 64 KiB, checked before anything is read) into guarded
    /// memory and hands `body` its bytes minus one trailing newline (and a CR before it).
    private static func withSecretFile<T>(_ path: String, what: String, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        let bytes = try SecretFile.read(path, what: "the \(what) file", limit: 65536)
        return try bytes.withUnsafeBytes { raw in
            var length = raw.count
            if length > 0, raw[length - 1] == 0x0A { length -= 1 }
            if length > 0, raw[length - 1] == 0x0D { length -= 1 }
            guard length > 0 else { throw UsageError("the \(what) file \(path) is empty") }
            return try body(UnsafeRawBufferPointer(rebasing: raw[..<length]))
        }
    }
}
