import CTSS2Esys
import CredentialVault

/// The storage key and sealed data objects.
extension TPMConnection {
    /// The owner hierarchy's storage key: ECC P-256, AES-128-CFB, noDA, the same template
    /// every time, so the same TPM gives the same key and nothing needs to be persisted (ECC:
    /// about a millisecond; RSA would be 25-100 ms of prime search on each open).
    func createPrimary() throws(TPMResponseCode) -> ESYS_TR {
        var sensitive = TPM2B_SENSITIVE_CREATE()
        var template = TPM2B_PUBLIC()
        template.publicArea.type = TPM2_ALG_ECC
        template.publicArea.nameAlg = TPM2_ALG_SHA256
        template.publicArea.objectAttributes = TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_RESTRICTED
            | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT
            | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_NODA
        template.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES
        template.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128
        template.publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB
        template.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL
        template.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256
        template.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL
        var outsideInfo = TPM2B_DATA()
        var creationPCR = TPML_PCR_SELECTION()
        var handle: ESYS_TR = ESYS_TR_NONE
        try check("Esys_CreatePrimary", Esys_CreatePrimary(
            context, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
            &sensitive, &template, &outsideInfo, &creationPCR, &handle, nil, nil, nil, nil))
        track(handle)
        return handle
    }

    /// The policy a PCR-bound object carries: "these PCRs (SHA-256 bank) have the values they
    /// have now" and "the caller knows the authValue" (PolicyAuthValue: the binding still
    /// holds under a policy). Computed in a trial session.
    func policyDigest(pcrs: PCRSelection) throws(TPMResponseCode) -> [UInt8] {
        var symmetric = TPMT_SYM_DEF()
        symmetric.algorithm = TPM2_ALG_NULL
        var trial: ESYS_TR = ESYS_TR_NONE
        try check("Esys_StartAuthSession", Esys_StartAuthSession(
            context, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
            nil, TPM2_SE_TRIAL, &symmetric, TPM2_ALG_SHA256, &trial))
        track(trial)
        defer { flush(trial) }
        try applyPolicy(trial, pcrs: pcrs)
        var out: UnsafeMutablePointer<TPM2B_DIGEST>?
        try check("Esys_PolicyGetDigest", Esys_PolicyGetDigest(context, trial, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &out))
        defer { Esys_Free(out) }
        guard let out else { throw TPMResponseCode("Esys_PolicyGetDigest", TPMResponseCode.policyFail) }
        return TPM2B.bytes(out)
    }

    /// PolicyPCR (the current values: empty digest) then PolicyAuthValue, in `session`.
    private func applyPolicy(_ session: ESYS_TR, pcrs: PCRSelection) throws(TPMResponseCode) {
        var pcrDigest = TPM2B_DIGEST()
        var selection = pcrs.tpml
        try check("Esys_PolicyPCR", Esys_PolicyPCR(context, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pcrDigest, &selection))
        try check("Esys_PolicyAuthValue", Esys_PolicyAuthValue(context, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE))
    }

    /// Seals `secret` (1...128 bytes) under `parent` with the authValue `auth`, and with `pcrs`
    /// also to those PCRs' current values. fixedTPM | fixedParent (it never leaves this TPM
    /// under this key), noDA (a wrong authValue is refused without counting towards the TPM's
    /// dictionary-attack lockout, so a confused caller cannot lock the TPM for everyone). The
    /// secret travels encrypted (salted session). Returns the public and private parts.
    func seal(_ secret: SecureBytes, parent: ESYS_TR, auth: SecureBytes, pcrs: PCRSelection?) throws(TPMResponseCode) -> SealedObject {
        var sensitive = TPM2B_SENSITIVE_CREATE()
        defer { wipeValue(&sensitive) }
        secret.withUnsafeBytes { bytes in
            sensitive.sensitive.data.size = UInt16(bytes.count)
            withUnsafeMutableBytes(of: &sensitive.sensitive.data.buffer) { $0.copyMemory(from: bytes) }
        }
        auth.withUnsafeBytes { bytes in
            let used = UnsafeRawBufferPointer(rebasing: bytes.prefix(32))
            sensitive.sensitive.userAuth.size = UInt16(used.count)
            withUnsafeMutableBytes(of: &sensitive.sensitive.userAuth.buffer) { $0.copyMemory(from: used) }
        }
        var template = TPM2B_PUBLIC()
        template.publicArea.type = TPM2_ALG_KEYEDHASH
        template.publicArea.nameAlg = TPM2_ALG_SHA256
        // USERWITHAUTH only without a policy: with one, the authValue alone must not bypass it.
        template.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_NODA
            | (pcrs == nil ? TPMA_OBJECT_USERWITHAUTH : 0)
        template.publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL
        if let pcrs {
            let digest = try policyDigest(pcrs: pcrs)
            template.publicArea.authPolicy.size = UInt16(digest.count)
            withUnsafeMutableBytes(of: &template.publicArea.authPolicy.buffer) { $0.copyBytes(from: digest) }
        }
        var outsideInfo = TPM2B_DATA()
        var creationPCR = TPML_PCR_SELECTION()
        var outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>?
        var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
        let session = try startSession(type: TPM2_SE_HMAC, saltKey: parent)
        defer { flush(session) }
        try check("Esys_Create", Esys_Create(
            context, parent, session, ESYS_TR_NONE, ESYS_TR_NONE,
            &sensitive, &template, &outsideInfo, &creationPCR, &outPrivate, &outPublic, nil, nil, nil))
        defer {
            Esys_Free(outPrivate)
            Esys_Free(outPublic)
        }
        guard let outPrivate, let outPublic else { throw TPMResponseCode("Esys_Create", TPMResponseCode.objectMemory) }
        return try SealedObject(public: outPublic, private: outPrivate)
    }

    /// Loads a sealed object under `parent` (flushed with the connection). A blob made by
    /// another TPM, or under another storage key, fails here with TPM2_RC_INTEGRITY.
    func load(_ object: SealedObject, parent: ESYS_TR) throws(TPMResponseCode) -> ESYS_TR {
        var pub = TPM2B_PUBLIC()
        var priv = TPM2B_PRIVATE()
        try object.unmarshal(public: &pub, private: &priv)
        var handle: ESYS_TR = ESYS_TR_NONE
        try check("Esys_Load", Esys_Load(context, parent, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &priv, &pub, &handle))
        track(handle)
        return handle
    }

    /// Unseals the loaded `object` with the authValue `auth` (and, when it is PCR-bound, in a
    /// policy session that proves the PCR values), in a session salted with `saltKey` that
    /// encrypts the response. The secret goes from ESYS's output straight into guarded memory;
    /// the output is wiped before it is freed (Esys_Free does not wipe).
    func unseal(_ object: ESYS_TR, auth: SecureBytes, saltKey: ESYS_TR, pcrs: PCRSelection?) throws(TPMResponseCode) -> SecureBytes {
        let session: ESYS_TR
        if let pcrs {
            session = try startSession(type: TPM2_SE_POLICY, saltKey: saltKey)
            try applyPolicy(session, pcrs: pcrs)
        } else {
            session = try startSession(type: TPM2_SE_HMAC, saltKey: saltKey)
        }
        defer { flush(session) }
        try setAuth(object, auth)
        defer { clearAuth(object) }
        var out: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
        try check("Esys_Unseal", Esys_Unseal(context, object, session, ESYS_TR_NONE, ESYS_TR_NONE, &out))
        defer {
            if let out { wipeValue(&out.pointee) }
            Esys_Free(out)
        }
        guard let out else { throw TPMResponseCode("Esys_Unseal", TPMResponseCode.objectMemory) }
        return TPM2B.secureBytes(out)
    }
}
