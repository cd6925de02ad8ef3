#if canImport(Glibc)
import Glibc
#endif

/// An `AF_UNIX` address from raw bytes: a path, or an abstract name (leading NUL), with the
/// length `bind`, `connect` and `sendto` take (the family and exactly those bytes).
package struct UnixAddress {
    var storage = sockaddr_un()
    package let length: socklen_t

    /// `nil` when `bytes` do not fit `sun_path` with a terminating NUL.
    package init?(_ bytes: [UInt8]) {
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: storage.sun_path) else { return nil }
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in for (index, byte) in bytes.enumerated() { raw[index] = byte } }
        length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
    }

    /// Calls `body` with the address as a `sockaddr` and its length.
    package func withSocketAddress<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
    }
}
