import CTSS2Esys
import CredentialVault

/// The strongest device custodian: a random 32-byte device secret sealed to this machine's
/// TPM 2.0 (tpm2-tss ESYS, in-process), and rollback counters in the TPM's NV memory.
///
/// - A backup of `$HOME` (the sealed blob, the host secret, the machine id) opens nothing
///   without this TPM: the blob loads only under this TPM's storage key (another TPM, or this
///   one after a clear, which replaces that key: `notAvailable` saying the key is gone).
/// - The sealed object's authValue is derived from `binding` (from the host secret): another
///   local user who reaches the TPM (root, the group `tss`) cannot unseal it without this
///   user's host secret (`permissionDenied`). noDA: wrong guesses do not lock the TPM.
/// - Optionally bound to PCR values (`TPMConfiguration.pcrs`): refused once they change.
/// - The secret crosses the socket or bus only encrypted (sessions salted with the storage
///   key), goes from ESYS straight into guarded memory, and before an operation returns one
///   more TPM command and `Esys_Finalize` clear ESYS's own copy. Every transient object and
///   session is flushed (swtpm and `/dev/tpm0` have no resource manager and three slots).
/// - Every operation has a deadline (`TPMConfiguration.deadline`): a TPM that another program
///   holds gives `timedOut`, never a hang. Calls block their thread (up to the deadline).
///
/// Counters are non-orderly NV counters, one per vault, at an index in the owner range chosen
/// from the vault id (the next free one on collision; the index is the counter's `reference`),
/// authorized by a value derived from `binding` and the vault id. A TPM counter starts at the
/// highest value any counter on that TPM had, and never goes back.
///
/// The owner hierarchy's authorization is assumed empty (as on swtpm and most machines): it
/// defines and removes counters. Not configurable yet.
public struct TPMCustodian: DeviceCustodian {
    /// Which TPM, where the blob is, the PCRs and the deadline.
    public let configuration: TPMConfiguration

    /// `.tpm`.
    public var custody: DeviceCustody { .tpm }

    /// `true`: its counters are found from the vault id (`anchoredCounter`).
    public var anchorsCounters: Bool { true }

    /// A custodian for `configuration` (checked on each call: `invalidArgument`).
    public init(configuration: TPMConfiguration) {
        self.configuration = configuration
    }

    /// Unseals this user's device secret; with `create` and no sealed secret yet, makes a random
    /// one, seals it (checking that it unseals) and writes the blob (0600, 0700 directory,
    /// created atomically: two processes racing agree on one). Errors: `notAvailable` (no TPM,
    /// or no sealed secret and `create` false; the TPM was cleared or the blob is another
    /// TPM's: the key that sealed it is gone),
    /// `permissionDenied` (another binding; PCRs changed), `timedOut`, `invalidArgument` (the
    /// configuration; the blob sealed with other PCRs than configured), `corrupted`, `io`.
    public func deviceSecret(binding: SecureBytes, create: Bool) throws(CredentialVaultError) -> SecureBytes {
        let pcrs = try configuration.validated()
        try TPMBinding.check(binding)
        let configuration = configuration
        let auth = TPMBinding.objectAuth(binding)
        return try operate { (tpm, abandonment) throws(CredentialVaultError) in
            let store = SealedSecretStore(configuration: configuration)
            if let sealed = try store.read() {
                guard sealed.pcrs == pcrs else { throw store.pcrMismatch(sealed: sealed.pcrs, configured: pcrs) }
                return try tpm.run(configuration) { () throws(TPMResponseCode) in try tpm.unsealFile(sealed, auth: auth) }
            }
            guard create else {
                throw .notAvailable(
                    "there is no TPM-sealed device secret at \(configuration.path): restore that file from a backup of this machine, or create the vault's custody again")
            }
            let secret = SecureBytes.random(count: 32)
            let sealed = try tpm.run(configuration) { () throws(TPMResponseCode) in
                let srk = try tpm.createPrimary()
                defer { tpm.flush(srk) }
                return SealedSecretFile(pcrs: pcrs, object: try tpm.seal(secret, parent: srk, auth: auth, pcrs: pcrs))
            }
            // Never trust a seal that was not shown to open.
            let check = try tpm.run(configuration) { () throws(TPMResponseCode) in try tpm.unsealFile(sealed, auth: auth) }
            guard check.constantTimeEquals(secret) else { throw .io("the TPM did not return the secret it sealed; nothing was written") }
            try abandonment.check()
            guard try store.create(sealed) else {
                // Another process sealed one first: use theirs.
                guard let theirs = try store.read() else { throw .io("\(configuration.path) vanished while it was being made; retry") }
                guard theirs.pcrs == pcrs else { throw store.pcrMismatch(sealed: theirs.pcrs, configured: pcrs) }
                return try tpm.run(configuration) { () throws(TPMResponseCode) in try tpm.unsealFile(theirs, auth: auth) }
            }
            return secret
        }
    }

    /// Defines the vault's NV counter (at the first free index of its candidates), increments
    /// it once (a counter is unreadable before) and returns its index and value. A counter of
    /// this vault left defined by an interrupted call (its authValue opens it) is reused.
    public func createCounter(vaultID: [UInt8], binding: SecureBytes) throws(CredentialVaultError) -> RollbackCounter {
        _ = try configuration.validated()
        try TPMBinding.check(binding)
        try Self.checkVaultID(vaultID)
        let configuration = configuration
        let auth = TPMBinding.counterAuth(binding, vaultID: vaultID)
        let tag = TPMBinding.anchorTag(vaultID: vaultID)
        return try operate { (tpm, abandonment) throws(CredentialVaultError) in
            for index in TPMBinding.counterIndices(vaultID: vaultID) {
                try abandonment.check()
                let value = try tpm.run(configuration) { () throws(TPMResponseCode) -> UInt64? in
                    if let existing = try tpm.openIndex(index) {
                        // Taken: this vault's own (an interrupted earlier call) or another's.
                        guard try tpm.isCounter(existing) else { return nil }
                        return try tpm.adoptCounter(existing, auth: auth)
                    }
                    let nv: ESYSHandle
                    do throws(TPMResponseCode) {
                        nv = try tpm.defineCounter(index: index, auth: auth, tag: tag)
                    } catch {
                        if error.tpmCode == TPMResponseCode.nvDefined { return nil }
                        throw error
                    }
                    try tpm.increment(nv, auth: auth)
                    return try tpm.read(nv, auth: auth)
                }
                if let value { return RollbackCounter(reference: index, value: value) }
            }
            throw .io("no free TPM NV index for this vault's counter among \(TPMBinding.probes) candidates; nothing was changed")
        }
    }

    /// The counter's value; `nil` when no NV index `reference` exists (removed, or another TPM).
    /// An index there that is not this vault's counter (its authValue does not open it) is
    /// `permissionDenied`: someone replaced it.
    public func readCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) -> UInt64? {
        let auth = try counterAuth(vaultID: vaultID, reference: reference, binding: binding)
        let configuration = configuration
        return try operate { (tpm, _) throws(CredentialVaultError) in
            guard let nv = try Self.openCounter(tpm, reference, configuration) else { return nil }
            return try tpm.run(configuration, counter: reference) { () throws(TPMResponseCode) in try tpm.read(nv, auth: auth) }
        }
    }

    /// Adds one to the counter. `notAvailable` when it does not exist on this TPM.
    public func incrementCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        let auth = try counterAuth(vaultID: vaultID, reference: reference, binding: binding)
        let configuration = configuration
        try operate { (tpm, abandonment) throws(CredentialVaultError) in
            guard let nv = try Self.openCounter(tpm, reference, configuration) else { throw Self.missingCounter(reference) }
            try abandonment.check()
            try tpm.run(configuration, counter: reference) { () throws(TPMResponseCode) in try tpm.increment(nv, auth: auth) }
        }
    }

    /// Removes the counter (NV_UndefineSpace), after checking that it is this vault's (its
    /// authValue opens it): another's index at that place is never removed. No error when absent.
    public func removeCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        let auth = try counterAuth(vaultID: vaultID, reference: reference, binding: binding)
        let configuration = configuration
        try operate { (tpm, abandonment) throws(CredentialVaultError) in
            guard let nv = try Self.openCounter(tpm, reference, configuration) else { return }
            let ours = try tpm.run(configuration) { () throws(TPMResponseCode) in try tpm.adoptCounter(nv, auth: auth, incrementing: false) }
            guard ours != nil else { throw Self.foreignCounter(reference) }
            try abandonment.check()
            try tpm.run(configuration) { () throws(TPMResponseCode) in try tpm.undefine(nv) }
        }
    }

    /// The index of the counter this TPM holds for the vault `vaultID`, found by its tag
    /// (`TPMBinding.anchorTag`) among the indices the id proposes: no host secret needed, and
    /// nothing in the user's files can hide it. `nil` when there is none, and when this TPM
    /// cannot be reached at all (no device, no access, no socket: no counter of this user's can
    /// be there); a TPM that is reached and fails, or does not answer in time, throws.
    /// Counters made before tags have none and are not found.
    public func anchoredCounter(vaultID: [UInt8]) throws(CredentialVaultError) -> UInt32? {
        _ = try configuration.validated()
        try Self.checkVaultID(vaultID)
        let configuration = configuration
        let tcti = configuration.tcti
        let tag = TPMBinding.anchorTag(vaultID: vaultID)
        let candidates = TPMBinding.counterIndices(vaultID: vaultID)
        return try observed { () throws(CredentialVaultError) -> UInt32? in
            try TPMWorker.run(tcti: tcti, deadline: configuration.deadline) { (abandonment) throws(CredentialVaultError) -> UInt32? in
                let tpm: TPMConnection
                do throws(TPMResponseCode) {
                    tpm = try TPMConnection(tcti: tcti)
                } catch {
                    // Not reached (the TCTI could not open the device or socket): nothing to ask.
                    // Reached and failing (it did not start): that TPM may hold the counter.
                    if error.operation == "Tss2_TctiLdr_Initialize" { return nil }
                    throw error.connectionError(tcti: tcti)
                }
                defer { tpm.close() }
                guard let defined = try tpm.run(configuration, { () throws(TPMResponseCode) in try tpm.definedIndices(among: candidates) }) else {
                    throw .io("the TPM at \(tcti) lists more NV indices than this custodian reads; whether it holds this vault's counter is unknown, so the vault is not opened")
                }
                for index in candidates where defined.contains(index) {
                    try abandonment.check()
                    let found = try tpm.run(configuration) { () throws(TPMResponseCode) -> Bool in
                        guard let nv = try tpm.openIndex(index) else { return false }
                        return try tpm.counterTag(nv) == tag  // not secret: the vault id is public
                    }
                    if found { return index }
                }
                return nil
            }
        }
    }

    // MARK: -

    /// Connects, runs `body`, closes (flush, one more command, finalize), on a worker thread
    /// with the configured deadline.
    private func operate<T: Sendable>(
        _ body: @escaping @Sendable (TPMConnection, Abandonment) throws(CredentialVaultError) -> T
    ) throws(CredentialVaultError) -> T {
        let tcti = configuration.tcti
        let logger = configuration.logger
        return try observed { () throws(CredentialVaultError) in
            try TPMWorker.run(tcti: tcti, deadline: configuration.deadline) { (abandonment) throws(CredentialVaultError) in
                let connection: TPMConnection
                do throws(TPMResponseCode) {
                    connection = try TPMConnection(tcti: tcti)
                } catch {
                    throw error.connectionError(tcti: tcti)
                }
                logger.debug("connected to the TPM", metadata: ["category": "tpm", "tcti": .string(tcti)])
                let result = try body(connection, abandonment)
                connection.close()
                return result
            }
        }
    }

    private static func checkVaultID(_ vaultID: [UInt8]) throws(CredentialVaultError) {
        guard (1...64).contains(vaultID.count) else { throw .invalidArgument("a vault id has 1 to 64 bytes, not \(vaultID.count)") }
    }

    private static func checkReference(_ reference: UInt32) throws(CredentialVaultError) {
        guard TPMBinding.ownerRange.contains(reference) else {
            throw .corrupted("the rollback counter reference 0x\(String(reference, radix: 16)) is not a TPM NV index of the owner range")
        }
    }

    /// The counter's authValue, after checking the configuration, the vault id and `reference`.
    private func counterAuth(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) -> SecureBytes {
        _ = try configuration.validated()
        try TPMBinding.check(binding)
        try Self.checkVaultID(vaultID)
        try Self.checkReference(reference)
        return TPMBinding.counterAuth(binding, vaultID: vaultID)
    }

    /// The NV index `reference`; `nil` when none is defined; refused when it is not a counter
    /// with this custodian's attributes.
    private static func openCounter(
        _ tpm: TPMConnection, _ reference: UInt32, _ configuration: TPMConfiguration
    ) throws(CredentialVaultError) -> ESYSHandle? {
        guard let nv = try tpm.run(configuration, { () throws(TPMResponseCode) in try tpm.openIndex(reference) }) else { return nil }
        guard try tpm.run(configuration, { () throws(TPMResponseCode) in try tpm.isCounter(nv) }) else { throw foreignCounter(reference) }
        return nv
    }

    private static func foreignCounter(_ reference: UInt32) -> CredentialVaultError {
        .permissionDenied(
            "the TPM NV index 0x\(String(reference, radix: 16)) is not this vault's rollback counter: it was removed and replaced by another; nothing was changed")
    }

    private static func missingCounter(_ reference: UInt32) -> CredentialVaultError {
        .notAvailable(
            "the vault's rollback counter (TPM NV index 0x\(String(reference, radix: 16))) does not exist on this TPM: it was removed, or this is another TPM")
    }
}
