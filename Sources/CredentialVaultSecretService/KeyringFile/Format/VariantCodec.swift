import CLibSecret
import CredentialVault

/// GVariant through GLib for the keyring file: reading data that came from outside (the file,
/// a decrypted item) in GLib's untrusted mode, and serialising what is written. The variadic
/// `g_variant_new`/`g_variant_get` do not import into Swift, so values are built and taken
/// apart child by child.
///
/// **Endianness.** The file is little-endian GVariant, as oo7 writes it and as libsecret does on
/// the little-endian machines it runs on (it converts the integers with `GUINT32_TO_LE` and
/// serialises in the host's order). GLib works in the host's order, so on a big-endian host
/// every value is byte-swapped (`g_variant_byteswap`) after reading and before writing.
enum VariantCodec {
    /// Whether GLib's serialisation (host order) differs from the file's (little-endian).
    static let hostIsBigEndian = UInt16(1).bigEndian == 1

    /// Reads `bytes` as a GVariant of `type` and hands it to `body` (borrowed: do not keep it).
    ///
    /// In untrusted mode (GLib checks every offset it follows and never reads outside the
    /// bytes), and only when the bytes are in normal form (the one canonical encoding): GLib
    /// reads anything else as default values (empty strings, zero), which must not pass for the
    /// file's content. The bytes are not copied unless they are misaligned for GLib (a decrypted
    /// item's are not: it is in guarded memory, 16-byte aligned), and must stay alive during
    /// `body`. Throws `corrupted`, naming `what`, for bytes that are not such a value.
    static func read<R>(
        _ bytes: UnsafeRawBufferPointer, as type: String, what: String, _ body: (OpaquePointer) throws(CredentialVaultError) -> R
    ) throws(CredentialVaultError) -> R {
        let variantType = g_variant_type_new(type)
        defer { g_variant_type_free(variantType) }
        // Static: GLib neither copies nor frees these bytes; the variant is gone before they are.
        let shared = g_bytes_new_static(bytes.baseAddress, gsize(bytes.count))
        defer { g_bytes_unref(shared) }
        guard let parsed = g_variant_new_from_bytes(variantType, shared, 0) else { throw .corrupted("\(what) is not GVariant data") }
        g_variant_ref_sink(parsed)
        defer { g_variant_unref(parsed) }
        guard g_variant_is_normal_form(parsed) != 0 else {
            throw .corrupted("\(what) is not a well-formed GVariant of type \(type)")
        }
        guard hostIsBigEndian else { return try body(parsed) }
        guard let swapped = g_variant_byteswap(parsed) else { throw .corrupted("\(what) cannot be byte-swapped") }
        defer { g_variant_unref(swapped) }
        return try body(swapped)
    }

    /// Calls `body` with child `index` of the container `value` (borrowed).
    static func child<R>(
        _ value: OpaquePointer, _ index: Int, _ body: (OpaquePointer) throws(CredentialVaultError) -> R
    ) throws(CredentialVaultError) -> R {
        guard index < Int(g_variant_n_children(value)), let child = g_variant_get_child_value(value, gsize(index)) else {
            throw .corrupted("a GVariant container has fewer children than its type says")
        }
        defer { g_variant_unref(child) }
        return try body(child)
    }

    /// The number of children of a container (an array's elements).
    static func count(_ value: OpaquePointer) -> Int { Int(g_variant_n_children(value)) }

    /// The bytes of an `ay` value (borrowed from `value`).
    static func bytes(_ value: OpaquePointer) -> UnsafeRawBufferPointer {
        var count: gsize = 0
        let pointer = g_variant_get_fixed_array(value, &count, 1)
        return UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : Int(count))
    }

    /// The text of an `s` value (normal form guarantees valid UTF-8 without NUL).
    static func string(_ value: OpaquePointer) -> String {
        var length: gsize = 0
        guard let pointer = g_variant_get_string(value, &length) else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: Int(length)), as: UTF8.self)
    }

    // MARK: - Building

    /// A new `ay` value holding a copy of `bytes` (for what is not secret).
    static func byteArray(_ bytes: UnsafeRawBufferPointer) -> OpaquePointer {
        let byteType = g_variant_type_new("y")
        defer { g_variant_type_free(byteType) }
        return g_variant_new_fixed_array(byteType, bytes.baseAddress, gsize(bytes.count), 1)
    }

    /// A new `ay` value over `bytes` without copying them (a secret stays in guarded memory);
    /// the bytes must outlive the value and every value built from it.
    static func borrowedByteArray(_ bytes: UnsafeRawBufferPointer) -> OpaquePointer {
        let arrayType = g_variant_type_new("ay")
        defer { g_variant_type_free(arrayType) }
        let shared = g_bytes_new_static(bytes.baseAddress, gsize(bytes.count))
        defer { g_bytes_unref(shared) }
        return g_variant_new_from_bytes(arrayType, shared, 1)
    }

    /// A new `s` value.
    static func string(_ text: String) -> OpaquePointer { g_variant_new_string(text) }

    /// A new tuple of `children` (which it takes, floating).
    static func tuple(_ children: [OpaquePointer]) -> OpaquePointer {
        var list: [OpaquePointer?] = children
        return list.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
    }

    /// A new array of `elementType` holding `elements` (which it takes, floating).
    static func array(of elementType: String, _ elements: [OpaquePointer]) -> OpaquePointer {
        let type = g_variant_type_new(elementType)
        defer { g_variant_type_free(type) }
        var list: [OpaquePointer?] = elements
        return list.withUnsafeMutableBufferPointer { g_variant_new_array(type, $0.baseAddress, gsize($0.count)) }
    }

    /// A new dictionary entry.
    static func entry(_ key: OpaquePointer, _ value: OpaquePointer) -> OpaquePointer { g_variant_new_dict_entry(key, value) }

    /// `value` (taken: floating or not) serialised little-endian into guarded memory (an item's
    /// plaintext, before it is encrypted): the buffer and how many of its bytes are the value.
    static func serializedSecurely(_ value: OpaquePointer) -> (bytes: SecureBytes, count: Int) {
        serialized(value) { size, store in
            // GLib serialises only into memory aligned for the value (8 bytes for its `t`s), and
            // sodium_malloc aligns the start as the size is: a multiple of 16 makes it so.
            let buffer = SecureBytes(count: max(16, (size + 15) / 16 * 16))
            buffer.withUnsafeMutableBytes { if let base = $0.baseAddress { store(base) } }
            return (buffer, size)
        }
    }

    /// `value` (taken) serialised little-endian (the file's GVariant, which holds no plaintext).
    static func serializedBytes(_ value: OpaquePointer) -> [UInt8] {
        serialized(value) { size, store in
            var buffer = [UInt8](repeating: 0, count: size)
            buffer.withUnsafeMutableBytes { if let base = $0.baseAddress { store(base) } }
            return buffer
        }
    }

    private static func serialized<Buffer>(_ value: OpaquePointer, _ make: (Int, (UnsafeMutableRawPointer) -> Void) -> Buffer) -> Buffer {
        g_variant_ref_sink(value)
        var ordered = value
        if hostIsBigEndian, let swapped = g_variant_byteswap(value) {
            g_variant_unref(value)
            ordered = swapped
        }
        defer { g_variant_unref(ordered) }
        return make(Int(g_variant_get_size(ordered))) { g_variant_store(ordered, $0) }
    }
}
