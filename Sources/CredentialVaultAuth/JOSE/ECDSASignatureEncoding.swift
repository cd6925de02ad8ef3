/// Converts an ECDSA signature from the DER `ECDSA-Sig-Value` OpenSSL produces
/// (`SEQUENCE { r INTEGER, s INTEGER }`, RFC 3279 section 2.2.3) to the fixed-length `r || s`
/// JOSE requires (RFC 7518 section 3.4).
///
/// A pure function over bytes, so every edge case is testable without a key: DER drops leading
/// zero bytes of r and s (about one signature in 256 has a short one) and adds a zero byte before
/// one whose top bit is set; JOSE wants each left-padded to exactly the curve's size. Anything
/// that is not exactly that structure (extra bytes, long-form lengths where short ones fit,
/// negative or over-long integers) is refused with a typed error, never trapped on.
public enum ECDSASignatureEncoding {
    /// `r || s`, each left-padded to `coordinateSize` bytes (32 for P-256).
    /// - Throws: `JOSEError.signingFailed` when `der` is not a well-formed `ECDSA-Sig-Value`
    ///   whose integers are positive and fit in `coordinateSize` bytes.
    public static func rawSignature(fromDER der: [UInt8], coordinateSize: Int = 32) throws(JOSEError) -> [UInt8] {
        guard coordinateSize > 0, coordinateSize <= 66 else { throw malformed("unsupported coordinate size") }
        var reader = DERReader(bytes: der[...])
        var sequence = try reader.element(tag: 0x30)
        guard reader.isAtEnd else { throw malformed("bytes after the signature") }
        let r = try sequence.element(tag: 0x02)
        let s = try sequence.element(tag: 0x02)
        guard sequence.isAtEnd else { throw malformed("more than two integers") }
        return try padded(integer: r.bytes, size: coordinateSize) + padded(integer: s.bytes, size: coordinateSize)
    }

    /// A DER INTEGER's content as an unsigned big-endian number of exactly `size` bytes.
    private static func padded(integer: ArraySlice<UInt8>, size: Int) throws(JOSEError) -> [UInt8] {
        guard let first = integer.first else { throw malformed("empty integer") }
        guard first & 0x80 == 0 else { throw malformed("negative integer") }
        // DER is minimal: a leading zero byte only when the next byte's top bit is set.
        if first == 0, integer.count > 1, integer[integer.startIndex + 1] & 0x80 == 0 {
            throw malformed("integer with a redundant leading zero")
        }
        let magnitude = integer.drop { $0 == 0 }
        guard !magnitude.isEmpty else { throw malformed("zero integer") }
        guard magnitude.count <= size else { throw malformed("integer longer than the curve") }
        return [UInt8](repeating: 0, count: size - magnitude.count) + magnitude
    }

    private static func malformed(_ why: String) -> JOSEError { .signingFailed("malformed ECDSA signature: \(why)") }

    /// Reads DER tag-length-value elements with definite, minimally encoded lengths.
    private struct DERReader {
        var bytes: ArraySlice<UInt8>

        var isAtEnd: Bool { bytes.isEmpty }

        /// The next element, which must have `tag`; its content becomes a reader of its own.
        mutating func element(tag: UInt8) throws(JOSEError) -> DERReader {
            guard let found = bytes.popFirst() else { throw malformed("truncated") }
            guard found == tag else { throw malformed("unexpected tag") }
            guard let first = bytes.popFirst() else { throw malformed("truncated length") }
            var length: Int
            if first < 0x80 {
                length = Int(first)
            } else {
                // Long form: 1 or 2 length bytes are plenty for any ECDSA signature.
                let count = Int(first & 0x7F)
                guard (1...2).contains(count), bytes.count >= count else { throw malformed("bad length") }
                length = 0
                for _ in 0..<count { length = length << 8 | Int(bytes.removeFirst()) }
                guard length >= 0x80, count == 1 || length > 0xFF else { throw malformed("non-minimal length") }
            }
            guard bytes.count >= length else { throw malformed("truncated content") }
            let content = bytes.prefix(length)
            bytes = bytes.dropFirst(length)
            return DERReader(bytes: content)
        }
    }
}
