import CTSS2Esys
import CredentialVault

/// Finding a vault's counter from its id alone: the anchor of its history under TPM custody.
extension TPMConnection {
    /// Which of `indices` are defined NV indices: one TPM2_GetCapability listing of the NV
    /// handles from the lowest of them on (paged while the TPM says there is more), rather than
    /// one command per index. `nil` when the TPM is still listing after 64 pages: what it holds
    /// beyond them is unknown, and an unknown is never "none".
    func definedIndices(among indices: [UInt32]) throws(TPMResponseCode) -> Set<UInt32>? {
        guard let lowest = indices.min(), let highest = indices.max() else { return [] }
        var defined: Set<UInt32> = []
        // TPM2_MAX_CAP_HANDLES is a composite macro that does not import: the array's own size.
        let capacity = MemoryLayout.size(ofValue: TPML_HANDLE().handle) / MemoryLayout<UInt32>.size
        var next = lowest
        // A TPM lists at most a few hundred handles per page; 64 pages bound a misbehaving one.
        for _ in 0..<64 {
            var more: TPMI_YES_NO = 0
            var data: UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?
            try check("Esys_GetCapability", Esys_GetCapability(
                context, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_HANDLES, next, UInt32(capacity), &more, &data))
            defer { Esys_Free(data) }
            guard let data else { return defined }
            let handles = withUnsafeBytes(of: data.pointee.data.handles.handle) { raw in
                Array(raw.bindMemory(to: UInt32.self).prefix(Int(min(data.pointee.data.handles.count, UInt32(capacity)))))
            }
            defined.formUnion(handles.filter { indices.contains($0) })
            guard more != 0, let last = handles.last, last < highest, last >= next else { return defined }
            next = last + 1
        }
        return nil
    }
}
