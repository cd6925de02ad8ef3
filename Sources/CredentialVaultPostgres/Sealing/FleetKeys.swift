import CredentialVault
import Foundation

/// The keys of an open fleet store, each derived for one purpose from the data key (so the
/// key that hashes names never seals, and the reverse), and the associated data that binds a
/// sealed row to its store, record and version.
struct FleetKeys: Sendable {
    /// The store's random 256-bit data key (wrapped per host in `fleet_hosts`).
    let dataKey: SecureBytes
    /// Seals records (XChaCha20-Poly1305), made once: a key in guarded memory costs a
    /// `sodium_malloc` (pages and guard pages), too much per call.
    let sealer: SealingKey
    /// Keys the BLAKE2b hash that names a record in the table.
    let nameKey: SecureBytes
    /// Keys the MAC of the store's state (its epoch and generation, `stateSeal`).
    let stateKey: SecureBytes
    /// The public half of this epoch's signing key (Ed25519, seed: subkey 4, context
    /// `CVFLTSIG`): it signs the next epoch's verify key in a rotation (`FleetKeyChain`), and a
    /// host remembers it to know the data key again.
    let verifyKey: [UInt8]
    /// The store's random id (16 bytes, in `fleet_meta`).
    let storeID: Data
    /// Which data key this is (incremented by each rotation).
    let keyEpoch: Int64

    init(dataKey: SecureBytes, storeID: Data, keyEpoch: Int64) throws(CredentialVaultError) {
        self.dataKey = dataKey
        sealer = try SealingKey(copying: Crypto.subkey(of: dataKey, id: 1, context: "CVFLTREC"))
        nameKey = Crypto.subkey(of: dataKey, id: 2, context: "CVFLTNAM")
        stateKey = Crypto.subkey(of: dataKey, id: 3, context: "CVFLTSTA")
        verifyKey = Crypto.signKeyPair(seed: Crypto.subkey(of: dataKey, id: 4, context: "CVFLTSIG")).publicKey
        self.storeID = storeID
        self.keyEpoch = keyEpoch
    }

    /// The record id: keyed BLAKE2b-256 of the length-prefixed service and account bytes (the
    /// prefixes keep ("ab", "c") and ("a", "bc") apart). The label is not part of the identity.
    func nameHash(_ key: CredentialKey) -> Data {
        var writer = ByteWriter(capacity: key.service.utf8.count + key.account.utf8.count + 8)
        writer.u32(UInt32(key.service.utf8.count))
        writer.raw(Array(key.service.utf8))
        writer.u32(UInt32(key.account.utf8.count))
        writer.raw(Array(key.account.utf8))
        return Data(writer.bytes.withUnsafeBytes { Crypto.keyedHash(key: nameKey, [$0]) })
    }

    /// What a row's seal is bound to: the format tag, the store id, the record id (name hash),
    /// the row version and the key epoch. A row copied to another name, another store or
    /// another version, or its version edited, no longer opens (`tampered`).
    func associatedData(nameHash: Data, version: Int64, epoch: Int64) -> Data {
        var writer = ByteWriter(capacity: 8 + storeID.count + nameHash.count + 16)
        writer.raw(Array("CVFLEET1".utf8))
        writer.raw(Array(storeID))
        writer.raw(Array(nameHash))
        writer.u64(UInt64(bitPattern: version))
        writer.u64(UInt64(bitPattern: epoch))
        return Data(writer.bytes)
    }

    /// Seals a record's plaintext for `version` of the row named `nameHash`.
    func seal(_ plaintext: Data, nameHash: Data, version: Int64) -> Data {
        return sealer.seal(plaintext, associatedData: associatedData(nameHash: nameHash, version: version, epoch: keyEpoch))
    }

    /// Opens a row; `tampered` when its ciphertext, name hash, version or epoch was changed.
    func open(_ sealed: Data, nameHash: Data, version: Int64, epoch: Int64) throws(CredentialVaultError) -> Data {
        // Every row is read in one snapshot with the meta row, whose epoch was checked to be
        // this key's first (a rotation since is `reopenRequired` there): a row of another epoch, older
        // or newer, was edited or put back by hand. (Reporting a newer one as a rotation would
        // send every host to reopen, forever.)
        guard epoch == keyEpoch else { throw .tampered }
        guard sealed.count >= SealingKey.overhead else { throw .tampered }
        return try sealer.open(sealed, associatedData: associatedData(nameHash: nameHash, version: version, epoch: epoch))
    }

    /// The seal of the store's state at `generation` (`fleet_meta.state_seal`): keyed BLAKE2b-256
    /// with the state key over `"CVFLTST1"` || store id || u64 key epoch || u64 generation. Only
    /// a holder of this epoch's data key can make it: a generation moved by anyone else (a row
    /// edited, inserted or deleted without the key) no longer matches its seal, and an older
    /// state put back carries its older generation.
    func stateSeal(generation: Int64) -> Data {
        var writer = ByteWriter(capacity: 8 + storeID.count + 16)
        writer.raw(Array("CVFLTST1".utf8))
        writer.raw(Array(storeID))
        writer.u64(UInt64(bitPattern: keyEpoch))
        writer.u64(UInt64(bitPattern: generation))
        return Data(writer.bytes.withUnsafeBytes { Crypto.keyedHash(key: stateKey, [$0]) })
    }

    /// Whether `seal` is the seal of this epoch's state at `generation` (compared in constant time).
    func isStateSeal(_ seal: Data, generation: Int64) -> Bool {
        constantTimeEquals(seal, stateSeal(generation: generation))
    }

    /// Signs `message` with this epoch's signing key (made when used).
    func sign(_ message: [UInt8]) -> [UInt8] {
        Crypto.sign(message, secretKey: Crypto.signKeyPair(seed: Crypto.subkey(of: dataKey, id: 4, context: "CVFLTSIG")).secretKey)
    }
}
