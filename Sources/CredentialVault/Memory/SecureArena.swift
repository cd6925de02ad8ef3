import CSodium

/// Many small secrets in one growable region of libsodium-guarded memory.
///
/// One `sodium_malloc` per secret would cost ~22 µs each and run into the kernel's map limit
/// (~16k live regions), so a store keeps all its values here instead: values are bump-allocated,
/// wiped on release, and when the region is full the live values move into a fresh guarded
/// region (twice the live size) and the old one is wiped by `sodium_free`.
/// Not thread-safe: the owner serialises access.
struct SecureArena: ~Copyable {
    /// A handle to a stored value; stays valid across compactions until released.
    typealias Handle = Int

    private var region: SecureBytes
    private var used = 0
    private var nextHandle = 0
    private var slots: [Handle: (offset: Int, count: Int)] = [:]

    init(capacity: Int = 4096) {
        region = SecureBytes(count: max(capacity, 64))
    }

    /// Copies `bytes` into the arena and returns their handle.
    mutating func store(_ bytes: UnsafeRawBufferPointer) -> Handle {
        if used + bytes.count > region.count { compact(toFit: bytes.count) }
        let offset = used
        if let base = bytes.baseAddress, bytes.count > 0 {
            region.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: offset).copyMemory(from: base, byteCount: bytes.count) }
        }
        used += bytes.count
        nextHandle += 1
        slots[nextHandle] = (offset, bytes.count)
        return nextHandle
    }

    /// Calls `body` with the value's bytes.
    func withBytes<R>(_ handle: Handle, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let slot = slots[handle]!
        return region.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[slot.offset..<slot.offset + slot.count])) }
    }

    /// Wipes the value now; its space is reclaimed at the next compaction.
    mutating func release(_ handle: Handle) {
        guard let slot = slots.removeValue(forKey: handle) else { return }
        if slot.count > 0 {
            region.withUnsafeMutableBytes { sodium_memzero($0.baseAddress!.advanced(by: slot.offset), slot.count) }
        }
    }

    /// Moves the live values into a fresh region with room for `extra` more bytes.
    private mutating func compact(toFit extra: Int) {
        let liveBytes = slots.values.reduce(0) { $0 + $1.count }
        var capacity = max(region.count, 64)
        while capacity < (liveBytes + extra) * 2 { capacity *= 2 }
        if capacity > 4 * (liveBytes + extra) + 4096 { capacity = 2 * (liveBytes + extra) + 4096 }
        let fresh = SecureBytes(count: capacity)
        var newOffset = 0
        region.withUnsafeBytes { old in
            fresh.withUnsafeMutableBytes { new in
                for (handle, slot) in slots.sorted(by: { $0.value.offset < $1.value.offset }) {
                    if slot.count > 0 {
                        new.baseAddress!.advanced(by: newOffset)
                            .copyMemory(from: old.baseAddress!.advanced(by: slot.offset), byteCount: slot.count)
                    }
                    slots[handle] = (newOffset, slot.count)
                    newOffset += slot.count
                }
            }
        }
        region = fresh  // the old region is wiped and unmapped by SecureBytes.deinit
        used = newOffset
    }
}
