import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// The header's layout and its feature bits (docs/FORMAT.md, *Header*): the offsets the
/// format document states are where the encoder writes each field, and a compatible feature
/// this library does not know is ignored by a reader, kept by a writer that keeps the data-key
/// wrap, and dropped by one that wraps the data key again.
@Suite(.ownThread) final class HeaderFeatureTests {
    let dir = TempDirectory()

    @Test func theEncoderWritesEachFieldAtItsDocumentedOffset() throws {
        let header = VaultHeader(
            minor: 0x0203, incompatibleFeatures: 0x0405_0607, compatibleFeatures: 0x0809_0A0B, vaultID: Array(0x10..<0x20),
            keySource: .passphrase, kdf: .argon2id13, opsLimit: 0x2122_2324_2526_2728, memLimitBytes: 0x3132_3334_3536_3738,
            salt: Array(0x40..<0x50), wrappedKey: Array(repeating: 0x5A, count: VaultHeader.wrappedKeySize),
            generation: 0x6162_6364_6566_6768, recordCount: 0x7172_7374, custody: .tpm, hasRollbackCounter: true)
        var w = ByteWriter()
        header.encode(into: &w)
        let bytes = w.bytes
        #expect(bytes.count == VaultHeader.size && VaultHeader.size == 156)
        #expect(header.keyParameterBytes() == Array(bytes[..<VaultHeader.keyParametersSize]) && VaultHeader.keyParametersSize == 72)
        func field(_ offset: Int, _ count: Int) -> UInt64 {
            bytes[offset..<offset + count].reversed().reduce(0) { $0 << 8 | UInt64($1) }  // little-endian
        }
        typealias O = VaultHeader.Offset
        #expect(Array(bytes[..<8]) == Array("CRDVAULT".utf8))
        #expect(field(O.major, 2) == 1 && field(O.minor, 2) == 0x0203)
        #expect(field(O.incompatibleFeatures, 4) == 0x0405_0607 && field(O.compatibleFeatures, 4) == 0x0809_0A0B)
        #expect(Array(bytes[O.vaultID..<O.vaultID + 16]) == Array(0x10..<0x20))
        #expect(bytes[O.keySource] == KeySource.passphrase.rawValue && bytes[O.kdf] == 1)
        #expect(bytes[O.custody] == DeviceCustody.tpm.rawValue && bytes[O.flags] == 1)
        #expect(field(O.opsLimit, 8) == 0x2122_2324_2526_2728 && field(O.memLimit, 8) == 0x3132_3334_3536_3738)
        #expect(Array(bytes[O.salt..<O.salt + 16]) == Array(0x40..<0x50))
        #expect(O.wrappedKey == VaultHeader.keyParametersSize && bytes[O.wrappedKey] == 0x5A)
        #expect(field(O.generation, 8) == 0x6162_6364_6566_6768 && field(O.recordCount, 4) == 0x7172_7374)
    }

    @Test func anUnknownCompatibleFeatureIsIgnoredKeptWithTheWrapAndDroppedByANewWrap() throws {
        let key = VaultSecret.passphrase(TestVault.passphrase)
        let configuration = TestVault.configuration(dir)
        let store = try TestVault.create(dir)
        let credential = CredentialKey(service: "s", account: "a")
        try store.save(Data("before".utf8), for: credential, options: .portable)
        // As a newer writer would leave it: an unknown compatible bit, wrapped in the key's
        // associated data (it is part of the key parameters).
        let unknownBit: UInt32 = 1 << 31
        try store.mutate { (s) throws(CredentialVaultError) in
            var header = s.contents.header
            header.compatibleFeatures = unknownBit
            let kek = try KeyWrapping.keyEncryptionKey(key, header: header, configuration: configuration)
            header.wrappedKey = KeyWrapping.wrap(s.keys.dataKey, kek: kek, header: header)
            s.contents.header = header
        }
        func bitsOnDisk() throws -> UInt32 {
            let offset = VaultHeader.Offset.compatibleFeatures
            return try TestVault.bytes(store.url)[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
        }
        #expect(try bitsOnDisk() == unknownBit)

        // Read as if it were not there.
        let reader = try SealedFileStore.open(at: store.url, secret: key, configuration: configuration)
        #expect(try reader.load(credential) == Data("before".utf8))
        // A save (a journal entry) and a compaction keep the wrap, so they keep the bit.
        try reader.save(Data("saved".utf8), for: credential, options: .portable)
        #expect(try bitsOnDisk() == unknownBit)
        try reader.mutate { (s) throws(CredentialVaultError) in s.rewriteRequested = true }
        #expect(try bitsOnDisk() == unknownBit)
        #expect(try SealedFileStore.open(at: store.url, secret: key, configuration: configuration).load(credential) == Data("saved".utf8))
        // A new wrap writes only the bits this library knows.
        try reader.changeSecret(from: key, to: key, kdf: TestVault.kdf)
        #expect(try bitsOnDisk() == VaultHeader.knownCompatibleFeatures)
        #expect(try SealedFileStore.open(at: store.url, secret: key, configuration: configuration).load(credential) == Data("saved".utf8))
    }
}
