/// A reader of the DER subset private keys use (X.690): definite lengths, one-byte tags.
/// It never copies: every value it returns is a range of the buffer it reads, which stays in
/// the caller's guarded memory. Every length is checked against what is left before use.
struct DERReader {
    /// Universal and context tags that key structures use.
    enum Tag: UInt8 {
        case integer = 0x02, bitString = 0x03, octetString = 0x04, null = 0x05, objectIdentifier = 0x06
        case sequence = 0x30, context0 = 0xA0, context1 = 0xA1
    }

    private let bytes: UnsafeRawBufferPointer
    private var position: Int
    private let end: Int

    /// A reader of `range` of `bytes`.
    init(_ bytes: UnsafeRawBufferPointer, range: Range<Int>? = nil) {
        self.bytes = bytes
        self.position = range?.lowerBound ?? 0
        self.end = range?.upperBound ?? bytes.count
    }

    /// Whether everything was read.
    var isAtEnd: Bool { position == end }

    /// The tag of the next element, if any.
    var nextTag: UInt8? { position < end ? bytes[position] : nil }

    /// Reads an element with `tag` and returns the range of its contents.
    mutating func read(_ tag: Tag) -> Range<Int>? {
        guard position + 2 <= end, bytes[position] == tag.rawValue else { return nil }
        var index = position + 1
        let first = Int(bytes[index])
        index += 1
        var length = 0
        if first < 0x80 {
            length = first
        } else {
            // Long form: 1 to 3 length bytes (16 MiB, far beyond a key), minimal, as DER wants.
            let count = first & 0x7F
            guard (1...3).contains(count), index + count <= end, bytes[index] != 0 else { return nil }
            for _ in 0..<count {
                length = length << 8 | Int(bytes[index])
                index += 1
            }
            guard length >= 0x80 else { return nil }
        }
        guard length <= end - index else { return nil }
        position = index + length
        return index..<(index + length)
    }

    /// A reader of the contents of the next element with `tag` (a constructed one).
    mutating func enter(_ tag: Tag) -> DERReader? {
        read(tag).map { DERReader(bytes, range: $0) }
    }

    /// The next INTEGER as an unsigned big-endian magnitude (a leading zero byte dropped);
    /// `nil` for a negative or empty one.
    mutating func unsignedInteger() -> Range<Int>? {
        guard let range = read(.integer), !range.isEmpty, bytes[range.lowerBound] & 0x80 == 0 else { return nil }
        if range.count > 1, bytes[range.lowerBound] == 0 { return (range.lowerBound + 1)..<range.upperBound }
        return range
    }

    /// Reads a small INTEGER (a version number) and checks its value.
    mutating func expectInteger(_ value: UInt8) -> Bool {
        guard let range = read(.integer), range.count == 1 else { return false }
        return bytes[range.lowerBound] == value
    }

    /// Reads an OBJECT IDENTIFIER and compares its encoded contents with `oid`.
    mutating func expectObjectIdentifier(_ oid: [UInt8]) -> Bool {
        guard let range = read(.objectIdentifier) else { return false }
        return range.count == oid.count && zip(range, oid).allSatisfy { bytes[$0] == $1 }
    }

    /// The bytes of `range` as a buffer (no copy).
    func slice(_ range: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[range]) }
}
