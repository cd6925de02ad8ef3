import CSodium

/// A fixed-size buffer of secret bytes in libsodium-guarded memory (`sodium_malloc`): guard
/// pages around it, locked into RAM (never swapped), and wiped when released.
///
/// `sodium_malloc` costs an mmap and an mlock (about 22 µs) and only some thousands can be live
/// at once, so this type holds keys and long-lived secrets; many small secrets go into a
/// `SecureArena`.
public final class SecureBytes: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    // Immutable after init except through `withUnsafeMutableBytes`, which callers use only
    // while they own the value exclusively (construction), so sharing it is safe.
    private let pointer: UnsafeMutableRawPointer
    /// The number of secret bytes.
    public let count: Int

    /// Allocates `count` zeroed guarded bytes.
    public init(count: Int) {
        Sodium.ensureInitialized()
        precondition(count >= 0, "negative size")
        // sodium_malloc(0) may return a non-null pointer or NULL; always ask for at least 1 byte.
        guard let raw = sodium_malloc(max(count, 1)) else {
            fatalError("sodium_malloc failed: out of locked memory (raise RLIMIT_MEMLOCK)")
        }
        pointer = raw
        self.count = count
        sodium_memzero(pointer, max(count, 1))
    }

    /// Copies `bytes` into guarded memory. The caller stays responsible for wiping its copy.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count)
        if let base = bytes.baseAddress, bytes.count > 0 {
            pointer.copyMemory(from: base, byteCount: bytes.count)
        }
    }

    /// Copies a byte array into guarded memory.
    public convenience init(copying bytes: [UInt8]) {
        self.init(count: bytes.count)
        bytes.withUnsafeBytes { buffer in
            if let base = buffer.baseAddress, buffer.count > 0 {
                pointer.copyMemory(from: base, byteCount: buffer.count)
            }
        }
    }

    /// `count` random bytes from libsodium's CSPRNG.
    public static func random(count: Int) -> SecureBytes {
        let bytes = SecureBytes(count: count)
        if count > 0 { randombytes_buf(bytes.pointer, count) }
        return bytes
    }

    deinit {
        // sodium_free wipes the region before unmapping it.
        sodium_free(pointer)
    }

    /// Calls `body` with the secret bytes. Do not let the pointer escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Calls `body` with the mutable secret bytes; only for filling a fresh buffer.
    public func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    /// Constant-time comparison (`sodium_memcmp`); sizes are not secret.
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        guard count == other.count else { return false }
        if count == 0 { return true }
        return sodium_memcmp(pointer, other.pointer, count) == 0
    }

    /// Redacted: never shows the bytes.
    public var description: String { "SecureBytes(\(count) bytes, redacted)" }
    /// Redacted: never shows the bytes.
    public var debugDescription: String { description }
}

/// Wipes a byte array in place (`sodium_memzero`, which the compiler may not optimise away).
package func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { buffer in
        if let base = buffer.baseAddress, buffer.count > 0 { sodium_memzero(base, buffer.count) }
    }
}

/// Constant-time comparison of two byte buffers (`sodium_memcmp`); lengths are not secret.
public func constantTimeEquals(_ lhs: some ContiguousBytesLike, _ rhs: some ContiguousBytesLike) -> Bool {
    lhs.withBytes { l in
        rhs.withBytes { r in
            guard l.count == r.count else { return false }
            guard let lb = l.baseAddress, let rb = r.baseAddress, l.count > 0 else { return true }
            return sodium_memcmp(lb, rb, l.count) == 0
        }
    }
}

/// Byte containers usable with `constantTimeEquals` (`[UInt8]`, `Data`, `SecureBytes`).
public protocol ContiguousBytesLike {
    /// Calls `body` with the bytes.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R
}

extension Array: ContiguousBytesLike where Element == UInt8 {
    /// Calls `body` with the bytes.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { withUnsafeBytes(body) }
}

extension SecureBytes: ContiguousBytesLike {
    /// Calls `body` with the bytes.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { withUnsafeBytes(body) }
}
