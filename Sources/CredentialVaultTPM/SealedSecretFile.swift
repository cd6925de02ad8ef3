import CredentialVault

/// The file beside the host secret that holds the TPM-sealed device secret:
///
///     "CVTPM" | version 1 (1 byte) | PCR count n (1 byte) | n PCR indices (SHA-256 bank) | SealedObject
///
/// Not secret (the TPM alone can open the object, and only with the binding), but kept 0600
/// in the 0700 directory like the host secret, and read with the same checks (no link
/// followed, `fstat` before reading, bounded size). The PCR list is recorded so that unsealing
/// uses the policy the object was made with, and a configuration that asks for other PCRs is
/// refused instead of silently using the blob's weaker (or different) binding.
struct SealedSecretFile: Sendable, Equatable {
    static let magic: [UInt8] = Array("CVTPM".utf8)
    static let version: UInt8 = 1
    /// Far above the 200-300 bytes a sealed object takes.
    static let limit = 4096

    /// The PCRs the object is bound to (`nil`: none).
    let pcrs: PCRSelection?
    let object: SealedObject

    init(pcrs: PCRSelection?, object: SealedObject) {
        self.pcrs = pcrs
        self.object = object
    }

    var bytes: [UInt8] {
        let indices = pcrs?.indices ?? []
        return Self.magic + [Self.version, UInt8(indices.count)] + indices + object.bytes
    }

    /// Parses the file; `corrupted` (saying which file) when it is not one.
    init(bytes: [UInt8], path: String) throws(CredentialVaultError) {
        let header = Self.magic.count + 2
        guard bytes.count > header, Array(bytes[..<Self.magic.count]) == Self.magic else {
            throw .corrupted("\(path) is not a TPM-sealed device secret")
        }
        guard bytes[Self.magic.count] == Self.version else {
            throw .unsupported("\(path) has version \(bytes[Self.magic.count]) of the TPM-sealed device secret format; this version reads version \(Self.version)")
        }
        let count = Int(bytes[Self.magic.count + 1])
        guard count <= 24, bytes.count > header + count else { throw .corrupted("\(path): bad PCR list") }
        let indices = bytes[header..<(header + count)].map { Int($0) }
        if count == 0 {
            pcrs = nil
        } else {
            guard let selection = PCRSelection(indices), selection.indices.count == count else {
                throw .corrupted("\(path): bad PCR list")
            }
            pcrs = selection
        }
        object = SealedObject(bytes: Array(bytes[(header + count)...]))
    }
}
