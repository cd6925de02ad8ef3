import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// `CredentialMetadata`'s dates: created (first save of a key), modified (last save) and, for
/// ephemeral credentials, the expiry. The sealed file records them in each record
/// (docs/FORMAT.md, *Records*). The in-memory store knows them all. Every clock here is a `ManualClock`,
/// so dates are exact (to the millisecond, the resolution of the file).
@Suite(.ownThread) final class MetadataDatesTests {
    let dir = TempDirectory()
    /// A start in whole milliseconds that is not a whole second, so that the millisecond survives.
    static let start = Date(timeIntervalSince1970: 1_800_000_000.125)
    let clock = ManualClock(start: MetadataDatesTests.start)
    let key = CredentialKey(service: "dates.example", account: "alice")
    let other = CredentialKey(service: "dates.example", account: "bob")

    private func at(_ seconds: Double) -> Date { Self.start.addingTimeInterval(seconds) }

    private func reopen(_ store: SealedFileStore) throws -> SealedFileStore {
        try SealedFileStore.open(
            at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir, clock: clock))
    }

    // MARK: - Sealed file

    @Test func timesSurviveReopenAndASaveMovesOnlyModified() throws {
        let store = try TestVault.create(dir, clock: clock)
        try store.save(Data("1".utf8), for: key, options: .portable)
        clock.advance(by: .milliseconds(1500))
        try store.save(Data("x".utf8), for: other, options: .default)
        clock.advance(by: .seconds(2))
        try store.save(Data("2".utf8), for: key, options: .default)  // another accessibility: still the same key

        for reader in [store, try reopen(store)] {
            let metadata = try #require(try reader.metadata(for: key))
            #expect(metadata.created == at(0), "kept from the first save")
            #expect(metadata.modified == at(3.5), "the last save")
            #expect(metadata.expiresAt == nil && !metadata.isEphemeral && metadata.accessibility == .deviceOnly)
            let untouched = try #require(try reader.metadata(for: other))
            #expect(untouched.created == at(1.5) && untouched.modified == at(1.5), "a new key: created is modified")
        }
    }

    /// The async API reads the same state (from its cache here).
    @Test func theAsyncAPIReportsTheSameDates() async throws {
        let store = try TestVault.create(dir, clock: clock)
        try store.synchronous.save(Data("1".utf8), for: key, options: .portable)
        let metadata = try await store.metadata(for: key)
        #expect(metadata == (try store.synchronous.metadata(for: key)))
        #expect(metadata?.created == at(0))
    }

    /// Another handle (here, as in another process) keeps the created time the first one wrote:
    /// it is taken from the record the save replaces under the lock, not from a stale view.
    @Test func anotherHandleKeepsTheCreatedTime() throws {
        let first = try TestVault.create(dir, clock: clock)
        let second = try reopen(first)
        try first.save(Data("1".utf8), for: key, options: .portable)
        clock.advance(by: .seconds(10))
        try second.save(Data("2".utf8), for: key, options: .portable)
        for reader in [first, second, try reopen(first)] {
            #expect(try reader.metadata(for: key)?.created == at(0))
            #expect(try reader.metadata(for: key)?.modified == at(10))
        }
    }

    /// After a delete or a take the key is gone: its next save creates it anew.
    @Test func aKeySavedAfterADeleteOrATakeIsCreatedAnew() throws {
        let store = try TestVault.create(dir, clock: clock)
        try store.save(Data("1".utf8), for: key, options: .portable)
        clock.advance(by: .seconds(1))
        try store.delete(key)
        try store.save(Data("2".utf8), for: key, options: .portable)
        #expect(try store.metadata(for: key)?.created == at(1))
        clock.advance(by: .seconds(1))
        _ = try store.take(key)
        try store.save(Data("3".utf8), for: key, options: .portable)
        #expect(try reopen(store).metadata(for: key)?.created == at(2))
    }

    @Test func anEphemeralCredentialReportsItsExpiry() throws {
        let store = try TestVault.create(dir, clock: clock)
        let ephemeral = StorageOptions(accessibility: .deviceOnly, lifetime: .ephemeral(ttl: .seconds(60)))
        try store.save(Data("code".utf8), for: key, options: ephemeral)
        for reader in [store, try reopen(store)] {
            let metadata = try #require(try reader.metadata(for: key))
            #expect(metadata.isEphemeral && metadata.expiresAt == at(60))
            #expect(metadata.created == at(0) && metadata.modified == at(0))
        }
        // Saved again before it expires: the same key, a new expiry.
        clock.advance(by: .seconds(30))
        try store.save(Data("code".utf8), for: key, options: ephemeral)
        #expect(try store.metadata(for: key)?.expiresAt == at(90))
        #expect(try store.metadata(for: key)?.created == at(0))
        // Past its expiry it is gone, and a save then creates the key anew.
        clock.advance(by: .seconds(60))
        #expect(try store.metadata(for: key) == nil)
        try store.save(Data("p".utf8), for: key, options: .portable)
        let metadata = try #require(try store.metadata(for: key))
        #expect(metadata.created == at(90) && metadata.expiresAt == nil && !metadata.isEphemeral)
    }

    /// Checked against the layout docs/FORMAT.md gives, not through the decoder: the record
    /// plaintext of a golden fixture's record has the two times right after the expiry.
    @Test func aRecordHasTheDocumentedLayout() throws {
        let (folder, device) = try GoldenFixtures.privateCopy(in: dir)
        let store = try SealedFileStore.open(
            at: folder.appendingPathComponent("passphrase.cvault"), secret: .passphrase(GoldenFixtures.passphrase),
            configuration: SealedFileConfiguration(device: device))
        let (vaultID, keys, records) = store.state.withLock { ($0.contents.header.vaultID, $0.keys, Array($0.contents.records.values)) }
        func u64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
            bytes[offset..<offset + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        let start = UInt64(GoldenFixtures.writingStart.timeIntervalSince1970 * 1000)
        for (n, (credential, _, _)) in GoldenFixtures.expected.enumerated() {
            let record = try #require(records.first { $0.key == credential })
            let plain = try #require(
                Crypto.open(record.sealed.box, key: keys.recordKey, associatedData: RecordCodec.outerAD(vaultID: vaultID, recordID: record.sealed.id)))
            #expect(plain[0] & ~7 == 0, "flags: device-only, ephemeral, label only")
            #expect(u64(plain, at: 1) == 0, "persistent: no expiry")
            #expect(u64(plain, at: 9) == start + UInt64(GoldenFixtures.expectedTimes[n].created) * 1000)
            #expect(u64(plain, at: 17) == start + UInt64(GoldenFixtures.expectedTimes[n].modified) * 1000)
            #expect(plain.count % RecordCodec.paddingBlock == 0, "padded")
        }
    }

    /// Every record carries both times, right after the expiry (created 0: unknown); a flag
    /// bit past the three known ones (8 and up) is corrupted, and so is a plaintext not padded
    /// to a multiple of 64 bytes.
    @Test func aRecordWithAnUnknownFlagOrNoPaddingIsCorrupted() throws {
        let store = try TestVault.create(dir, clock: clock)
        let (vaultID, keys) = store.state.withLock { ($0.contents.header.vaultID, $0.keys) }
        let id = Crypto.randomBytes(SealedRecord.idSize)
        func open(flags: UInt8, times: [UInt64], padded: Bool = true) throws(CredentialVaultError) -> RecordEntry {
            var plain = ByteWriter()
            plain.u8(flags)
            plain.u64(0)
            for time in times { plain.u64(time) }
            plain.string16("s")
            plain.string16("a")
            plain.u32(0)
            if padded { plain.raw([UInt8](repeating: 0, count: (RecordCodec.paddingBlock - plain.bytes.count % RecordCodec.paddingBlock) % RecordCodec.paddingBlock)) }
            let box = Crypto.seal(plain.bytes, key: keys.recordKey, associatedData: RecordCodec.outerAD(vaultID: vaultID, recordID: id))
            return try RecordCodec.openEntry(SealedRecord(id: id, box: box), vaultID: vaultID, keys: keys)
        }
        #expect(try open(flags: 0, times: [0, 7]).times == RecordTimes(createdMillis: nil, modifiedMillis: 7))
        #expect(try open(flags: 0, times: [5, 7]).times == RecordTimes(createdMillis: 5, modifiedMillis: 7))
        expectThrows(\CredentialVaultError.isCorrupted) { try open(flags: 8, times: [7, 7]) }
        expectThrows(\CredentialVaultError.isCorrupted) { try open(flags: 16, times: [7, 7]) }
        expectThrows(\CredentialVaultError.isCorrupted) { try open(flags: 0, times: [7, 7], padded: false) }
    }

    // MARK: - In memory

    @Test func theInMemoryStoreKnowsEveryDate() throws {
        let store = InMemoryStore(clock: clock)
        try store.save(Data("1".utf8), for: key, options: .portable)
        clock.advance(by: .seconds(2))
        try store.save(Data("2".utf8), for: key, options: .default)
        var metadata = try #require(try store.metadata(for: key))
        #expect(metadata.created == at(0) && metadata.modified == at(2) && metadata.expiresAt == nil)

        try store.delete(key)
        try store.save(Data("3".utf8), for: key, options: .portable)
        #expect(try store.metadata(for: key)?.created == at(2), "deleted, then created anew")

        let ephemeral = StorageOptions(accessibility: .deviceOnly, lifetime: .ephemeral(ttl: .seconds(60)))
        try store.save(Data("e".utf8), for: other, options: ephemeral)
        metadata = try #require(try store.metadata(for: other))
        #expect(metadata.isEphemeral && metadata.expiresAt == at(62) && metadata.created == at(2))
        // Past its expiry it is gone: saved again, it is created anew.
        clock.advance(by: .seconds(61))
        try store.save(Data("e".utf8), for: other, options: ephemeral)
        metadata = try #require(try store.metadata(for: other))
        #expect(metadata.created == at(63) && metadata.expiresAt == at(123))
    }
}
