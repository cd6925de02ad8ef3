import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Reads a passphrase from the terminal with echo off (only with --ask-passphrase).
package enum Prompt {
    package static func passphrase(confirm: Bool) throws -> VaultSecret {
        let fd = open("/dev/tty", O_RDWR)
        guard fd >= 0 else { throw UsageError("--ask-passphrase needs a terminal; use --passphrase-file") }
        defer { close(fd) }
        let first = try read(fd, prompt: "Passphrase: ")
        if confirm {
            let second = try read(fd, prompt: "Repeat passphrase: ")
            guard first.constantTimeEquals(second) else { throw UsageError("the passphrases differ") }
        }
        guard first.count > 0 else { throw UsageError("empty passphrase") }
        return .passphrase(first)
    }

    private static func read(_ fd: Int32, prompt: String) throws -> SecureBytes {
        // Echo off first, then the prompt: what was typed before the prompt showed is discarded
        // (TCSAFLUSH), and what is typed once it shows is kept (a person or a program answering
        // at the prompt lost the passphrase when the flush came after the prompt).
        var saved = termios()
        tcgetattr(fd, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(fd, TCSAFLUSH, &silent)
        defer {
            tcsetattr(fd, TCSADRAIN, &saved)
            _ = Glibc.write(fd, "\n", 1)
        }
        _ = prompt.withCString { Glibc.write(fd, $0, strlen($0)) }
        let buffer = SecureBytes(count: 1024)
        var length = 0
        try buffer.withUnsafeMutableBytes { raw in
            while length < raw.count {
                var byte: UInt8 = 0
                let n = Glibc.read(fd, &byte, 1)
                if n <= 0 || byte == 0x0A { break }
                raw[length] = byte
                length += 1
            }
            if length == raw.count { throw UsageError("passphrase longer than 1024 bytes") }
        }
        return buffer.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[..<length])) }
    }
}
