import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import CredentialVaultAuth

/// After a signing key read from a PEM is released, its private value is nowhere in this
/// process's writable memory: not in the key (OpenSSL clears it), and not in what reading the
/// PEM left behind. The test never holds the private value itself: Python gives it masked.
@Suite(
    "signing keys leave no private value in memory once released",
    .enabled(if: !Sanitizers.active, "memory scans are meaningless under ASan/TSan"))
struct SigningKeyMemoryTests {
    /// Occurrences of the value `masked ^ mask` in this process's writable mappings, read
    /// through /proc/self/mem (an address unmapped meanwhile is an error there, not a crash)
    /// into a buffer of its own mapping, which is not scanned.
    static func occurrences(masked: [UInt8], mask: [UInt8]) -> Int {
        let chunk = 1 << 20
        let buffer = mmap(nil, chunk + 64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)!
        defer { munmap(buffer, chunk + 64) }
        let own = UInt(bitPattern: buffer)..<(UInt(bitPattern: buffer) + UInt(chunk + 64))
        let memory = open("/proc/self/mem", O_RDONLY)
        guard memory >= 0 else { return -1 }
        defer { close(memory) }
        let maps = mapsText()
        let first = masked[0] ^ mask[0]
        let bytes = buffer.assumingMemoryBound(to: UInt8.self)
        var hits = 0
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("rw"), !line.hasSuffix("[stack]") else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            guard bounds.count == 2, !own.contains(bounds[0]) else { continue }
            var address = bounds[0]
            while address < bounds[1] {
                // Overlap by 64 bytes, so a value across two chunks is seen (once: only
                // matches starting before `count` are counted).
                let count = Int(min(UInt(chunk), bounds[1] - address))
                let readable = Int(min(UInt(chunk + 64), bounds[1] - address))
                let read = pread(memory, buffer, readable, off_t(Int(bitPattern: address)))
                if read >= masked.count {
                    var offset = 0
                    while offset < min(count, read - masked.count + 1) {
                        guard let found = memchr(bytes + offset, Int32(first), min(count, read - masked.count + 1) - offset) else { break }
                        let at = UnsafeRawPointer(found) - UnsafeRawPointer(bytes)
                        if (1..<masked.count).allSatisfy({ bytes[at + $0] ^ mask[$0] == masked[$0] }) { hits += 1 }
                        offset = at + 1
                    }
                }
                address += UInt(count)
            }
        }
        return hits
    }

    /// /proc/self/maps, read to its end with POSIX calls and decoded leniently: a mapped file
    /// whose path is not UTF-8 (tests of difficult names run beside this one) made a strict
    /// decoding fail, and the scan then saw no memory at all.
    static func mapsText() -> String {
        let descriptor = open("/proc/self/maps", O_RDONLY)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A new key in PEM (`openssl genpkey`) and its private value as `masked` and `mask`
    /// (d for EC, the 32-byte seed for Ed25519), never in the clear in this process.
    static func key(_ algorithm: String, in directory: TempDirectory) throws -> (pem: URL, masked: [UInt8], mask: [UInt8]) {
        let file = try IndependentJOSE.openSSLKey(algorithm, in: directory, "key.pem")
        let script = #"""
            import sys, os
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            key = serialization.load_pem_private_key(open(sys.argv[1], 'rb').read(), None)
            if isinstance(key, ec.EllipticCurvePrivateKey):
                value = key.private_numbers().private_value.to_bytes(32, 'big')
            else:
                value = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
            mask = bytes(b or 1 for b in os.urandom(len(value)))
            print(bytes(a ^ b for a, b in zip(value, mask)).hex(), mask.hex())
            """#
        let output = try IndependentJOSE.run("/usr/bin/python3", ["-c", script, file.path]).split(separator: " ")
        func bytes(_ hex: Substring) -> [UInt8] {
            stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
        }
        return (file, bytes(output[0].trimmingCharacters(in: .whitespacesAndNewlines)[...]), bytes(output[1].trimmingCharacters(in: .whitespacesAndNewlines)[...]))
    }

    @Test("a PKCS#8 PEM key, read and released, leaves no copy of its private value", arguments: ["EC", "ED25519"])
    func pemKeyLeavesNoCopy(algorithm: String) throws {
        let directory = TempDirectory()
        let (file, masked, mask) = try Self.key(algorithm, in: directory)
        #expect(Self.occurrences(masked: masked, mask: mask) == 0, "the value is in memory before the key is read")
        // Read ten times: a forgotten temporary then leaves several remnants, one of which
        // outlives the allocator's reuse of freed blocks.
        for _ in 0..<10 {
            let pem = try SecureBytes(copying: Array(Data(contentsOf: file)))
            let key = try JWSSigningKey(privateKey: pem)
            _ = try JWSSigner(key: key).sign(claims: ["a": "b"])
        }
        // The scan can see a value on the heap: a marker of the same length, planted and wiped.
        // (Not the live Ed25519 key: where OpenSSL keeps its seed depends on the process, and
        // in the full parallel suite the scan did not find it there.)
        let marker = (0..<masked.count).map { _ in UInt8.random(in: 1...255) }
        let markerMask = (0..<masked.count).map { _ in UInt8.random(in: 1...255) }
        let planted = malloc(marker.count)!.assumingMemoryBound(to: UInt8.self)
        for index in marker.indices { planted[index] = marker[index] ^ markerMask[index] }
        #expect(Self.occurrences(masked: marker, mask: markerMask) > 0, "the scan sees a value on the heap")
        memset(planted, 0, marker.count)
        free(planted)
        #expect(Self.occurrences(masked: masked, mask: mask) == 0, "copies of the private value left behind")
    }
}
