import CTSS2Esys

/// A TPM or TSS response code, with the few cases the custodian tells apart.
///
/// Composite C macros such as `((TPM2_RC)(TPM2_RC_VER1 + 0x000))` do not import into Swift
/// ("structure not supported"): the values are spelled out here, from the TPM 2.0 spec part 2.
struct TPMResponseCode: Error, Sendable, Equatable {
    static let initialize: UInt32 = 0x100          // TPM2_RC_INITIALIZE: already started
    static let nvUninitialized: UInt32 = 0x14A     // TPM2_RC_NV_UNINITIALIZED
    static let nvDefined: UInt32 = 0x14C           // TPM2_RC_NV_DEFINED: the index is taken
    static let nvSpace: UInt32 = 0x14B             // TPM2_RC_NV_SPACE: no NV memory left
    static let handle: UInt32 = 0x08B              // TPM2_RC_HANDLE (fmt 1): e.g. no such NV index
    static let policyFail: UInt32 = 0x09D          // TPM2_RC_POLICY_FAIL (fmt 1)
    static let authFail: UInt32 = 0x08E            // TPM2_RC_AUTH_FAIL (fmt 1)
    static let badAuth: UInt32 = 0x0A2             // TPM2_RC_BAD_AUTH (fmt 1): wrong authValue, noDA
    static let integrity: UInt32 = 0x09F           // TPM2_RC_INTEGRITY (fmt 1): another TPM's blob
    static let lockout: UInt32 = 0x921             // TPM2_RC_LOCKOUT (warning)
    static let objectMemory: UInt32 = 0x902        // TPM2_RC_OBJECT_MEMORY (warning)
    static let sessionMemory: UInt32 = 0x903       // TPM2_RC_SESSION_MEMORY (warning)
    static let retry: UInt32 = 0x922               // TPM2_RC_RETRY (warning)
    static let yielded: UInt32 = 0x908             // TPM2_RC_YIELDED (warning)
    static let testing: UInt32 = 0x90A             // TPM2_RC_TESTING (warning)

    /// The command that failed (fixed names, never data).
    let operation: String
    let rc: UInt32

    init(_ operation: String, _ rc: UInt32) {
        self.operation = operation
        self.rc = rc
    }

    /// The layer: 0 the TPM, 6 the ESYS... (`TSS2_RC_LAYER_SHIFT` 16); 10 the TCTI.
    var layer: UInt32 { rc >> 16 }

    /// A TPM-layer code without the handle, session or parameter number of format-1 codes.
    var tpmCode: UInt32? {
        guard layer == 0 else { return nil }
        return rc & 0x80 != 0 ? rc & 0xBF : rc
    }

    /// The TSS's own decoding of the code (fixed text, never data).
    var decoded: String { String(cString: Tss2_RC_Decode(rc)) }

    /// "Esys_Unseal: 0x9a2 (tpm:session(1):...)".
    var summary: String { "\(operation): 0x\(String(rc, radix: 16)) (\(decoded))" }
}

/// Runs a TSS call and throws its response code unless it succeeded.
@inline(__always)
func check(_ operation: StaticString, _ rc: TSS2_RC) throws(TPMResponseCode) {
    if rc != TSS2_RC_SUCCESS { throw TPMResponseCode("\(operation)", rc) }
}
