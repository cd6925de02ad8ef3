import CTSS2Esys
import CTSS2TctiLdr
import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// One connection to a TPM through tpm2-tss ESYS: the TCTI context, the ESYS context, and every
/// transient object and session made through it.
///
/// Not `Sendable`, deliberately: ESYS is not thread-safe and one context holds one connection.
/// A connection lives on the one thread that runs a custodian operation (`TPMWorker`) and is
/// closed before that operation returns. Without a resource manager (swtpm, `/dev/tpm0`)
/// transient objects and sessions outlive the connection and the TPM has three object slots:
/// everything made here is flushed, always (`close`, or `deinit` on an error path).
final class TPMConnection {
    private var tcti: OpaquePointer?  // TSS2_TCTI_CONTEXT *
    private var esys: OpaquePointer?  // ESYS_CONTEXT *
    private var transients: [ESYS_TR] = []

    /// The ESYS context, for the operations in the extensions of this type.
    var context: OpaquePointer? { esys }

    /// Connects to the TPM the TCTI configuration string names (`device:/dev/tpmrm0`,
    /// `swtpm:path=...`) and makes sure it is started.
    init(tcti configuration: String) throws(TPMResponseCode) {
        var t: OpaquePointer?
        try check("Tss2_TctiLdr_Initialize", Tss2_TctiLdr_Initialize(configuration, &t))
        var e: OpaquePointer?
        let rc = Esys_Initialize(&e, t, nil)
        guard rc == TSS2_RC_SUCCESS else {
            Tss2_TctiLdr_Finalize(&t)
            throw TPMResponseCode("Esys_Initialize", rc)
        }
        tcti = t
        esys = e
        // Firmware (a real TPM) or swtpm's startup-clear flag has sent Startup already: then
        // TPM2_RC_INITIALIZE means "started", which is what is needed.
        let started = Esys_Startup(e, TPM2_SU_CLEAR)
        guard started == TSS2_RC_SUCCESS || started == TPMResponseCode.initialize else {
            throw TPMResponseCode("Esys_Startup", started)  // deinit finalizes
        }
    }

    deinit { finish() }

    /// Flushes everything this connection made, sends one more command so that ESYS's command
    /// and response buffers no longer hold the last operation's parameters (measured: after an
    /// unseal one copy of the secret stays there until the next command), and finalizes the
    /// contexts (which closes the socket or device).
    func close() {
        finish()
    }

    private func finish() {
        guard esys != nil else { return }
        for handle in transients.reversed() { _ = Esys_FlushContext(esys, handle) }
        transients.removeAll()
        var out: UnsafeMutablePointer<TPM2B_DIGEST>?
        if Esys_GetRandom(esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, 32, &out) == TSS2_RC_SUCCESS { Esys_Free(out) }
        Esys_Finalize(&esys)
        Tss2_TctiLdr_Finalize(&tcti)
    }

    /// Records a transient object or session for flushing.
    func track(_ handle: ESYS_TR) {
        transients.append(handle)
    }

    /// Flushes a transient object or session now (no-op for one this connection did not make).
    func flush(_ handle: ESYS_TR) {
        guard let at = transients.firstIndex(of: handle) else { return }
        transients.remove(at: at)
        _ = Esys_FlushContext(esys, handle)
    }

    /// Gives the ESYS object `handle` the authValue `auth` (at most 32 bytes; ESYS uses it in
    /// session HMACs, never in the clear with an HMAC or policy session).
    func setAuth(_ handle: ESYS_TR, _ auth: SecureBytes) throws(TPMResponseCode) {
        var value = TPM2B_AUTH()
        defer { wipeValue(&value) }
        value.size = UInt16(min(auth.count, 32))
        auth.withUnsafeBytes { bytes in
            withUnsafeMutableBytes(of: &value.buffer) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.prefix(32))) }
        }
        try check("Esys_TR_SetAuth", Esys_TR_SetAuth(esys, handle, &value))
    }

    /// Overwrites the authValue ESYS keeps for `handle` (it frees its objects without wiping).
    func clearAuth(_ handle: ESYS_TR) {
        var empty = TPM2B_AUTH()
        _ = Esys_TR_SetAuth(esys, handle, &empty)
    }

    /// An authorization session (HMAC or policy, SHA-256). With `saltKey`, the session is
    /// salted with that key and its parameters are AES-128-CFB encrypted both ways: what the
    /// command sends (a secret to seal) and what the response carries (an unsealed secret)
    /// never cross the socket or bus in the clear. Without, an unsalted session whose HMAC
    /// proves knowledge of the object's authValue without revealing it.
    func startSession(type: TPM2_SE, saltKey: ESYS_TR?) throws(TPMResponseCode) -> ESYS_TR {
        var symmetric = TPMT_SYM_DEF()
        if saltKey != nil {
            symmetric.algorithm = TPM2_ALG_AES
            symmetric.keyBits.aes = 128
            symmetric.mode.aes = TPM2_ALG_CFB
        } else {
            symmetric.algorithm = TPM2_ALG_NULL
        }
        var session: ESYS_TR = ESYS_TR_NONE
        try check("Esys_StartAuthSession", Esys_StartAuthSession(
            esys, saltKey ?? ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
            nil, type, &symmetric, TPM2_ALG_SHA256, &session))
        track(session)
        var attributes: TPMA_SESSION = TPMA_SESSION_CONTINUESESSION
        if saltKey != nil { attributes |= TPMA_SESSION_DECRYPT | TPMA_SESSION_ENCRYPT }
        try check("Esys_TRSess_SetAttributes", Esys_TRSess_SetAttributes(esys, session, attributes, 0xff))
        return session
    }

    /// Random bytes from the TPM (not secret here: the scrubbing command of `close`, tests).
    func random(_ count: UInt16) throws(TPMResponseCode) -> [UInt8] {
        var out: UnsafeMutablePointer<TPM2B_DIGEST>?
        try check("Esys_GetRandom", Esys_GetRandom(esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, count, &out))
        defer { Esys_Free(out) }
        guard let out else { return [] }
        return TPM2B.bytes(out)
    }
}

/// Reading and wiping the TPM2B structures ESYS hands out.
enum TPM2B {
    /// The bytes of a TPM2B output (`{ UINT16 size; BYTE buffer[N]; }`) read in place: copying
    /// the struct would leave an unwiped copy of a secret on the stack.
    static func bytes<T>(_ pointer: UnsafeMutablePointer<T>) -> [UInt8] {
        let raw = UnsafeRawPointer(pointer)
        let size = min(Int(raw.loadUnaligned(as: UInt16.self)), MemoryLayout<T>.size - 2)
        return Array(UnsafeRawBufferPointer(start: raw + 2, count: size))
    }

    /// The bytes of a TPM2B output, straight into guarded memory.
    static func secureBytes<T>(_ pointer: UnsafeMutablePointer<T>) -> SecureBytes {
        let raw = UnsafeRawPointer(pointer)
        let size = min(Int(raw.loadUnaligned(as: UInt16.self)), MemoryLayout<T>.size - 2)
        return SecureBytes(copying: UnsafeRawBufferPointer(start: raw + 2, count: size))
    }
}

/// Overwrites a C struct in place (`explicit_bzero`: not optimised away).
func wipeValue<T>(_ value: inout T) {
    withUnsafeMutableBytes(of: &value) { explicit_bzero($0.baseAddress!, $0.count) }
}

/// An ESYS resource handle (a transient object, a session, an NV index).
typealias ESYSHandle = ESYS_TR
