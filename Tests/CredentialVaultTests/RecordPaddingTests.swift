import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// Record plaintexts are padded to a multiple of 64 bytes, so the file shows each record's size
/// to 64 bytes only (SECURITY.md, what an observer learns).
@Suite(.ownThread) final class RecordPaddingTests {
    let dir = TempDirectory()

    /// The sealed size of every record the store holds.
    private func boxSizes(_ store: SealedFileStore) -> [Int] {
        TestVault.sealedRecords(store).values.map(\.count)
    }

    @Test func recordsArePaddedTo64Bytes() throws {
        let store = try TestVault.create(dir)
        // Values and names of different lengths that fall into the same 64-byte step (with the
        // 16 bytes of times, 1 + 8 + 16 + 3 + 3 + 4 + 14 = 49 bytes for the longest).
        try store.save(Data(count: 1), for: CredentialKey(service: "s", account: "a"), options: .portable)
        try store.save(Data(count: 14), for: CredentialKey(service: "s", account: "b"), options: .portable)
        try store.save(Data(count: 20), for: CredentialKey(service: "service", account: "bb"), options: .portable)
        try store.save(Data(count: 1000), for: CredentialKey(service: "s", account: "c"), options: .default)
        let sizes = boxSizes(store)
        #expect(sizes.allSatisfy { ($0 - Crypto.sealOverhead) % RecordCodec.paddingBlock == 0 }, "\(sizes)")
        #expect(Set(sizes).count == 2, "the three short records look alike: \(sizes.sorted())")
        // And they read back exactly, from a fresh open too.
        let reopened = try SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
        #expect(try reopened.load(CredentialKey(service: "s", account: "b")) == Data(count: 14))
        #expect(try reopened.load(CredentialKey(service: "s", account: "c")) == Data(count: 1000))
    }

    /// Padding is zeros up to the next multiple of 64 bytes, inside the AEAD: a record whose
    /// plaintext ends in anything else, or in 64 zeros more, or stops short of a multiple of 64,
    /// is not one a writer made.
    @Test func onlyZeroPaddingToTheNextStepIsAccepted() throws {
        let store = try TestVault.create(dir)
        let (vaultID, keys) = store.state.withLock { ($0.contents.header.vaultID, $0.keys) }
        let id = Crypto.randomBytes(SealedRecord.idSize)
        var plain = ByteWriter()
        plain.u8(0)
        plain.u64(0)
        plain.u64(1)
        plain.u64(2)
        plain.string16("s")
        plain.string16("a")
        plain.u32(1)
        plain.u8(7)
        func sealed(_ tail: [UInt8]) -> SealedRecord {
            SealedRecord(id: id, box: Crypto.seal(plain.bytes + tail, key: keys.recordKey, associatedData: RecordCodec.outerAD(vaultID: vaultID, recordID: id)))
        }
        let padding = RecordCodec.paddingBlock - plain.bytes.count  // 36 bytes of fields: 28 zeros
        #expect(try RecordCodec.openEntry(sealed(Array(repeating: 0, count: padding)), vaultID: vaultID, keys: keys).key.account == "a")
        for tail: [UInt8] in [Array(repeating: 0, count: padding + 64), Array(repeating: 0, count: padding - 1), Array(repeating: 0, count: padding - 1) + [1], []] {
            expectThrows(\CredentialVaultError.isCorrupted) { try RecordCodec.openEntry(sealed(tail), vaultID: vaultID, keys: keys) }
        }
    }
}

/// The record plaintext is built in one buffer that never grows (`RecordCodec.seal` asserts
/// it): a reallocation, as padding to 64 bytes used to cause for some sizes, left an unwiped
/// copy of the value in freed memory (found by the async save's memory scan).
@Suite(.ownThread) struct RecordPlaintextBufferTests {
    @Test func everyValueSizeAndNameLengthSealsInOneBuffer() throws {
        let dir = TempDirectory()
        let store = try TestVault.create(dir)
        for size in 0..<160 {
            for (service, account) in [("s", "a"), ("service.example", "account-with-a-longer-name"), (String(repeating: "x", count: 61), "b")] {
                let key = CredentialKey(service: service, account: account)
                let value = Data(repeating: UInt8(truncatingIfNeeded: size), count: size)
                try store.save(value, for: key, options: size % 2 == 0 ? .portable : .default)
                #expect(try store.load(key) == value)
            }
        }
    }
}
