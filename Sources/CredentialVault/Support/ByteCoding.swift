/// Little-endian encoding into a byte array (the on-disk format's integers).
package struct ByteWriter {
    package var bytes: [UInt8] = []

    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    package mutating func u8(_ value: UInt8) { bytes.append(value) }
    package mutating func u16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    package mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    package mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    package mutating func raw(_ value: [UInt8]) { bytes.append(contentsOf: value) }
    package mutating func raw(_ value: UnsafeRawBufferPointer) { bytes.append(contentsOf: value) }

    /// A UTF-8 string with a 16-bit length prefix (names are limited to 4096 bytes).
    package mutating func string16(_ value: String) {
        let utf8 = Array(value.utf8)
        u16(UInt16(utf8.count))
        raw(utf8)
    }
}

/// Bounds-checked little-endian reading of untrusted bytes: every read either succeeds
/// within the buffer or returns `nil`; nothing here can trap on hostile input.
package struct ByteReader {
    private let bytes: UnsafeRawBufferPointer
    package private(set) var offset: Int

    package init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    package var remaining: Int { bytes.count - offset }

    package mutating func take(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, count <= remaining else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    package mutating func bytes(_ count: Int) -> [UInt8]? { take(count).map { Array($0) } }

    package mutating func u8() -> UInt8? { take(1).map { $0[0] } }

    package mutating func u16() -> UInt16? { integer(UInt16.self) }
    package mutating func u32() -> UInt32? { integer(UInt32.self) }
    package mutating func u64() -> UInt64? { integer(UInt64.self) }

    private mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
        guard let raw = take(MemoryLayout<T>.size) else { return nil }
        var value: T = 0
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: raw) }
        return T(littleEndian: value)
    }

    /// A UTF-8 string with a 16-bit length prefix; `nil` if out of bounds or not valid UTF-8.
    package mutating func string16() -> String? {
        guard let count = u16(), let raw = take(Int(count)) else { return nil }
        return String(validating: raw, as: UTF8.self)
    }
}
