import CLibSecret
import Foundation

/// Moves secret bytes between Swift and libsecret's `SecretValue`, which keeps them in
/// libsecret's secure (mlocked, wiped-on-free) memory.
enum SecretValueBridge {
    /// The content type of every value this backend writes: values are bytes, and the binary
    /// API with this type keeps NUL bytes (libsecret's text API stops at the first NUL).
    static let contentType = "application/octet-stream"

    /// A new `SecretValue` holding a copy of `bytes`; release it with `secret_value_unref`.
    static func makeValue(_ bytes: Data) -> OpaquePointer {
        bytes.withUnsafeBytes { raw -> OpaquePointer in
            if let base = raw.baseAddress, raw.count > 0 {
                return secret_value_new(base.assumingMemoryBound(to: CChar.self), raw.count, contentType)
            }
            // An empty value: libsecret wants a non-NULL pointer even for zero bytes.
            return withUnsafePointer(to: CChar(0)) { secret_value_new($0, 0, contentType) }
        }
    }

    /// Copies the bytes of `value` out (exactly, NULs included). Does not release `value`.
    static func bytes(of value: OpaquePointer) -> Data {
        var length: gsize = 0
        guard let pointer = secret_value_get(value, &length), length > 0 else { return Data() }
        return Data(bytes: pointer, count: Int(length))
    }
}
