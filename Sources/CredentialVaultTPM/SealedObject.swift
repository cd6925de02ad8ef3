import CTSS2Esys
import CredentialVault

/// A sealed data object as it is kept outside the TPM: marshalled TPM2B_PUBLIC ‖ TPM2B_PRIVATE
/// (tss2-mu). The private part is encrypted by the TPM's storage key: useless on another TPM.
struct SealedObject: Sendable, Equatable {
    /// The marshalled public and private parts, in that order.
    let bytes: [UInt8]

    /// Bytes read from a blob file; checked when they are unmarshalled.
    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Marshals the parts ESYS returned from `Esys_Create`.
    init(public pub: UnsafeMutablePointer<TPM2B_PUBLIC>, private priv: UnsafeMutablePointer<TPM2B_PRIVATE>) throws(TPMResponseCode) {
        var buffer = [UInt8](repeating: 0, count: MemoryLayout<TPM2B_PUBLIC>.size + MemoryLayout<TPM2B_PRIVATE>.size)
        var offset = 0
        try buffer.withUnsafeMutableBufferPointer { (out) throws(TPMResponseCode) in
            try check("Tss2_MU_TPM2B_PUBLIC_Marshal", Tss2_MU_TPM2B_PUBLIC_Marshal(pub, out.baseAddress, out.count, &offset))
            try check("Tss2_MU_TPM2B_PRIVATE_Marshal", Tss2_MU_TPM2B_PRIVATE_Marshal(priv, out.baseAddress, out.count, &offset))
        }
        bytes = Array(buffer[..<offset])
    }

    /// Unmarshals both parts; throws (TSS2_MU_RC_*) on a malformed or truncated blob, and on
    /// trailing bytes.
    func unmarshal(public pub: inout TPM2B_PUBLIC, private priv: inout TPM2B_PRIVATE) throws(TPMResponseCode) {
        var offset = 0
        try bytes.withUnsafeBufferPointer { (input) throws(TPMResponseCode) in
            try check("Tss2_MU_TPM2B_PUBLIC_Unmarshal", Tss2_MU_TPM2B_PUBLIC_Unmarshal(input.baseAddress, input.count, &offset, &pub))
            try check("Tss2_MU_TPM2B_PRIVATE_Unmarshal", Tss2_MU_TPM2B_PRIVATE_Unmarshal(input.baseAddress, input.count, &offset, &priv))
        }
        guard offset == bytes.count else { throw TPMResponseCode("unmarshal: trailing bytes", SealedObject.malformed) }
    }

    /// TSS2_MU_RC_BAD_SIZE (layer 9 | 10): what a blob with trailing bytes is reported as.
    static let malformed: UInt32 = 0x9_000A
}
