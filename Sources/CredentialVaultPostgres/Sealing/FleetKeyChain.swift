import CredentialVault
import Foundation

/// The rotations of a store's data key, each signed by the key before (`fleet_meta.key_chain`):
/// links of u64 key epoch || the epoch's verify key (32) || the Ed25519 signature (64), by the
/// previous epoch's signing key, of `"CVFLTROT"` || store_id || u64 key epoch || verify key.
///
/// Why: a wrapping by public key (a sealed box) can be made by anyone, the database's
/// administrator too, so the data key it holds is believed only when it is the key this host
/// knew, or a chain of rotations signed by the keys before leads to it from that one. (A
/// passphrase or key-file wrapping is authenticated by its own key-encryption key; the chain is
/// checked for every host alike.)
struct FleetKeyChain {
    struct Link: Equatable {
        let epoch: Int64
        let verifyKey: [UInt8]
        let signature: [UInt8]
    }

    static let linkBytes = 8 + 32 + 64
    let links: [Link]

    /// Parses the column (NULL: no rotation yet); `tampered` when it is not whole links.
    init(_ data: Data?) throws(CredentialVaultError) {
        let bytes = data ?? Data()
        guard bytes.count % Self.linkBytes == 0 else { throw .tampered }
        links = bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            var links: [Link] = []
            while let epoch = reader.u64(), let key = reader.take(32), let signature = reader.take(64) {
                links.append(Link(epoch: Int64(bitPattern: epoch), verifyKey: Array(key), signature: Array(signature)))
            }
            return links
        }
    }

    /// The link a rotation from `old` to `new` appends.
    static func link(from old: FleetKeys, to new: FleetKeys) -> Data {
        var writer = ByteWriter(capacity: linkBytes)
        writer.u64(UInt64(bitPattern: new.keyEpoch))
        writer.raw(new.verifyKey)
        writer.raw(old.sign(message(storeID: new.storeID, epoch: new.keyEpoch, verifyKey: new.verifyKey)))
        return Data(writer.bytes)
    }

    static func message(storeID: Data, epoch: Int64, verifyKey: [UInt8]) -> [UInt8] {
        var writer = ByteWriter(capacity: 8 + storeID.count + 8 + verifyKey.count)
        writer.raw(Array("CVFLTROT".utf8))
        writer.raw(Array(storeID))
        writer.u64(UInt64(bitPattern: epoch))
        writer.raw(verifyKey)
        return writer.bytes
    }

    /// Whether `keys` is the key `known` was, or the links from `known`'s epoch on, each
    /// signed by the one before, lead to it.
    func leads(from known: FleetMemory.KnownKey, to keys: FleetKeys) -> Bool {
        var verifyKey = known.verifyKey
        var epoch = known.epoch
        while epoch < keys.keyEpoch {
            // Links put in by anyone else do not verify (and cannot hide the real one).
            let signer = verifyKey
            guard
                let link = links.first(where: { link in
                    link.epoch == epoch + 1
                        && Crypto.verify(
                            signature: link.signature, of: Self.message(storeID: keys.storeID, epoch: link.epoch, verifyKey: link.verifyKey),
                            publicKey: signer)
                })
            else { return false }
            verifyKey = link.verifyKey
            epoch = link.epoch
        }
        return epoch == keys.keyEpoch && constantTimeEquals(verifyKey, keys.verifyKey)
    }
}
