import CTSS2Esys
import CredentialVault

/// NV monotonic counters, authorized by their own authValue (derived from the binding).
extension TPMConnection {
    /// The attributes of every counter: a counter (8 bytes, never goes back), read and written
    /// with its authValue, readable by the owner too (administration), noDA. Not orderly:
    /// orderly counters jump (to the next multiple of TPM2_PT_ORDERLY_COUNT) after a restart
    /// without TPM2_Shutdown, and the vault file must be able to equal the counter.
    static let counterAttributes: TPMA_NV = TPMA_NV_AUTHREAD | TPMA_NV_AUTHWRITE | TPMA_NV_OWNERREAD | TPMA_NV_NO_DA
        | (TPMA_NV(TPM2_NT_COUNTER) << TPMA_NV_TPM2_NT_SHIFT)

    /// Defines a counter at `index` with the authValue `auth` and the vault's `tag` as its
    /// authPolicy (`TPMBinding.anchorTag`), owner authorization: the empty owner password of
    /// swtpm and of most machines. Throws TPM2_RC_NV_DEFINED when the index is taken. The
    /// counter reads NV_UNINITIALIZED until its first increment.
    func defineCounter(index: UInt32, auth: SecureBytes, tag: [UInt8]) throws(TPMResponseCode) -> ESYS_TR {
        var value = TPM2B_AUTH()
        defer { wipeValue(&value) }
        auth.withUnsafeBytes { bytes in
            let used = UnsafeRawBufferPointer(rebasing: bytes.prefix(32))
            value.size = UInt16(used.count)
            withUnsafeMutableBytes(of: &value.buffer) { $0.copyMemory(from: used) }
        }
        var pub = TPM2B_NV_PUBLIC()
        pub.nvPublic.nvIndex = index
        pub.nvPublic.nameAlg = TPM2_ALG_SHA256
        pub.nvPublic.attributes = Self.counterAttributes
        pub.nvPublic.dataSize = 8
        let used = tag.prefix(MemoryLayout.size(ofValue: pub.nvPublic.authPolicy.buffer))
        pub.nvPublic.authPolicy.size = UInt16(used.count)
        withUnsafeMutableBytes(of: &pub.nvPublic.authPolicy.buffer) { $0.copyBytes(from: used) }
        var handle: ESYS_TR = ESYS_TR_NONE
        // The authValue is a command parameter: sent in a salted, encrypting session. Owner
        // authorization by password (empty) in the first slot, the session encrypts in the second.
        let srk = try createPrimary()
        let session = try startSession(type: TPM2_SE_HMAC, saltKey: srk)
        defer {
            flush(session)
            flush(srk)
        }
        try check("Esys_NV_DefineSpace", Esys_NV_DefineSpace(
            context, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, session, ESYS_TR_NONE, &value, &pub, &handle))
        return handle
    }

    /// The ESYS object for the NV index `index`; `nil` when no such index is defined.
    func openIndex(_ index: UInt32) throws(TPMResponseCode) -> ESYS_TR? {
        var handle: ESYS_TR = ESYS_TR_NONE
        let rc = Esys_TR_FromTPMPublic(context, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &handle)
        if rc == TSS2_RC_SUCCESS { return handle }
        let code = TPMResponseCode("Esys_TR_FromTPMPublic", rc)
        if code.tpmCode == TPMResponseCode.handle { return nil }
        throw code
    }

    /// Whether the NV index is a counter with exactly the attributes this custodian gives
    /// (TPMA_NV_WRITTEN aside, which the first increment sets), 8 bytes, and an authPolicy that
    /// is empty (counters made before the anchor tag) or a tag.
    func isCounter(_ nv: ESYS_TR) throws(TPMResponseCode) -> Bool {
        try counterTag(nv) != nil
    }

    /// The authPolicy of the NV index when it is one of this custodian's counters (see
    /// `isCounter`): the vault's anchor tag, or empty for a counter made before tags; `nil`
    /// for any other index.
    func counterTag(_ nv: ESYS_TR) throws(TPMResponseCode) -> [UInt8]? {
        var pub: UnsafeMutablePointer<TPM2B_NV_PUBLIC>?
        try check("Esys_NV_ReadPublic", Esys_NV_ReadPublic(context, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, nil))
        defer { Esys_Free(pub) }
        guard let pub else { return nil }
        let attributes = pub.pointee.nvPublic.attributes & ~TPMA_NV_WRITTEN
        guard attributes == Self.counterAttributes, pub.pointee.nvPublic.dataSize == 8 else { return nil }
        let policy = withUnsafeMutablePointer(to: &pub.pointee.nvPublic.authPolicy) { TPM2B.bytes($0) }
        guard policy.isEmpty || policy.count == 32 else { return nil }
        return policy
    }

    /// Adds one to the counter, authorized by `auth` in an HMAC session (the authValue never
    /// crosses the socket; the response HMAC proves the TPM did it).
    func increment(_ nv: ESYS_TR, auth: SecureBytes) throws(TPMResponseCode) {
        try setAuth(nv, auth)
        defer { clearAuth(nv) }
        let session = try startSession(type: TPM2_SE_HMAC, saltKey: nil)
        defer { flush(session) }
        try check("Esys_NV_Increment", Esys_NV_Increment(context, nv, nv, session, ESYS_TR_NONE, ESYS_TR_NONE))
    }

    /// The counter's value (big-endian on the TPM), authorized by `auth` in an HMAC session,
    /// whose response HMAC also proves the value came from the TPM unaltered.
    func read(_ nv: ESYS_TR, auth: SecureBytes) throws(TPMResponseCode) -> UInt64 {
        try setAuth(nv, auth)
        defer { clearAuth(nv) }
        let session = try startSession(type: TPM2_SE_HMAC, saltKey: nil)
        defer { flush(session) }
        var out: UnsafeMutablePointer<TPM2B_MAX_NV_BUFFER>?
        try check("Esys_NV_Read", Esys_NV_Read(context, nv, nv, session, ESYS_TR_NONE, ESYS_TR_NONE, 8, 0, &out))
        defer { Esys_Free(out) }
        guard let out else { throw TPMResponseCode("Esys_NV_Read", TPMResponseCode.nvUninitialized) }
        let bytes = TPM2B.bytes(out)
        guard bytes.count == 8 else { throw TPMResponseCode("Esys_NV_Read: size", TPMResponseCode.nvUninitialized) }
        return bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Removes the NV index (owner authorization).
    func undefine(_ nv: ESYS_TR) throws(TPMResponseCode) {
        try check("Esys_NV_UndefineSpace", Esys_NV_UndefineSpace(context, ESYS_TR_RH_OWNER, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE))
    }
}
