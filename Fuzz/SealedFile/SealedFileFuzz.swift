// libFuzzer target for the sealed-file parser, linked by scripts/fuzz/build.sh against the
// CredentialVault module built once for every target (with -enable-testing, so that its
// internal parsers are reachable). Each input is tried four ways:
//   1. as a whole vault file: header, key unwrap with the golden fixtures' keys (key file,
//      device key, or the golden passphrase when the KDF parameters are the fixture's cheap
//      ones), commit records, snapshot MAC, record table, journal, every record and value opened;
//   2. as a snapshot's record table behind a valid header (u32 record count, then the table):
//      when it frames, with a valid snapshot MAC and commit records naming it, so the records
//      are opened past the MAC;
//   3. as a record plaintext, sealed with the record key, so the record parser is reached past
//      the AEAD;
//   4. as the body of a journal entry with a valid chain MAC, behind an empty snapshot
//      whose second commit record is damaged (so the entry is rolled forward), so the journal
//      parser and the replay of its puts and deletes are reached past the MAC.
// Any error is fine; a crash, a trap, a leak or a hang is a finding.
@testable import CredentialVault
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The golden fixture keys (Tests/CredentialVaultTests/GoldenFixtureTests.swift).
private final class Fixture: @unchecked Sendable {
    let directory: URL
    let keyFile: URL
    let identity: DeviceIdentity
    let passphrase = VaultSecret.passphrase("golden fixture passphrase")
    let header: VaultHeader
    let keys: VaultKeys

    init() {
        var template = Array("/tmp/cv-fuzz-XXXXXX".utf8CString)
        directory = URL(fileURLWithPath: template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) })
        keyFile = directory.appendingPathComponent("keyfile")
        let secret = directory.appendingPathComponent("host-secret")
        _ = FileManager.default.createFile(
            atPath: keyFile.path, contents: Data((0..<32).map { UInt8(255 - $0) }), attributes: [.posixPermissions: 0o600])
        _ = FileManager.default.createFile(
            atPath: secret.path, contents: Data((0..<32).map { UInt8($0) }), attributes: [.posixPermissions: 0o600])
        identity = DeviceIdentity(hostSecretURL: secret, machineID: "golden-fixture-machine-id")
        // A fixed data key, so that the seeds written by one run authenticate in the next.
        let dataKey = SecureBytes(copying: [UInt8](repeating: 0x42, count: Crypto.keyBytes))
        keys = VaultKeys(dataKey: dataKey)
        // The header a fresh key-file vault gets (wrapping the data key for real).
        header = try! SealedFileStore.wrappedHeader(
            for: .keyFile(keyFile), kdf: .insecureTestingOnly, vaultID: Array(repeating: 7, count: VaultHeader.idSize),
            dataKey: dataKey, generation: 1, custody: .file, rollbackCounter: false, configuration: SealedFileConfiguration(device: identity))
    }

    func key(for header: VaultHeader) -> VaultSecret? {
        switch header.keySource {
        case .keyFile: return .keyFile(keyFile)
        case .device: return .device
        case .passphrase:
            // Only the fixture's cheap parameters: a fuzzed 1 GiB Argon2id would be a slow
            // input, not a finding (the range check itself is exercised by every input).
            return header.opsLimit == 1 && header.memLimitBytes == 8192 ? passphrase : nil
        }
    }

    var deviceRecordKey: SecureBytes {
        try! VaultKeys.deviceRecordKey(
            configuration: SealedFileConfiguration(device: identity), custody: .file, vaultID: header.vaultID, need: { .none })
    }
}

private let fixture = Fixture()

/// 1. The whole file, as `LockedVault.unlock` and `load` process it.
private func asVaultFile(_ bytes: [UInt8]) {
    guard let header = try? VaultFile.header(of: bytes), let key = fixture.key(for: header) else { return }
    let configuration = SealedFileConfiguration(device: fixture.identity)
    guard let kek = try? KeyWrapping.keyEncryptionKey(key, header: header, configuration: configuration),
        let dataKey = try? KeyWrapping.unwrap(header: header, kek: kek)
    else { return }
    let keys = VaultKeys(dataKey: dataKey)
    guard let contents = try? VaultContents.decode(bytes: bytes, header: header, keys: keys) else { return }
    for entry in contents.records.values {
        if var value = try? RecordCodec.openValue(entry.sealed, vaultID: header.vaultID, keys: keys, deviceKey: {
            () throws(CredentialVaultError) in
            try VaultKeys.deviceRecordKey(configuration: configuration, custody: header.custody, vaultID: header.vaultID, need: { .none })
        }) {
            value.resetBytes(in: 0..<value.count)
        }
    }
}

/// 2. A snapshot's record table behind a valid header. The snapshot MAC covers each record's
/// framing, so the table is split first (a table that does not frame is the parser's finding
/// to make, and `corrupted`); one that does gets a valid MAC and commit records naming it, and
/// its records are opened past them.
private func asRecordTable(_ bytes: [UInt8]) {
    guard bytes.count >= 4 else { return }
    var header = fixture.header
    header.recordCount = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    let table = Array(bytes[4...])
    let split = table.withUnsafeBytes { try? VaultFile.splitTable($0, count: header.recordCount) }
    guard let (ranges, end) = split, end == table.count else { return }
    var w = ByteWriter()
    header.encode(into: &w)
    let headerBytes = w.bytes
    let mac = headerBytes.withUnsafeBytes { h in
        table.withUnsafeBytes { VaultFile.tableMAC(header: h, table: $0, macKey: fixture.keys.macKey, recordRanges: ranges, label: JournaledFile.snapshotLabel) }
    }
    var file = headerBytes + [UInt8](repeating: 0, count: CommitRecord.snapshotOffset - headerBytes.count) + table + mac
    let commit = CommitRecord(generation: header.generation, journalEnd: UInt64(file.count), recordCount: header.recordCount, chain: mac)
    for (slot, offset) in CommitRecord.offsets.enumerated() {
        file.replaceSubrange(offset..<offset + CommitRecord.size, with: commit.encoded(macKey: fixture.keys.macKey, slot: slot))
    }
    _ = try? VaultContents.decode(bytes: file, header: header, keys: fixture.keys)
}

/// 3. A record plaintext, sealed for real.
private func asRecordPlaintext(_ bytes: [UInt8]) {
    let id = Array(repeating: UInt8(9), count: SealedRecord.idSize)
    let ad = RecordCodec.outerAD(vaultID: fixture.header.vaultID, recordID: id)
    let sealed = SealedRecord(id: id, box: Crypto.seal(bytes, key: fixture.keys.recordKey, associatedData: ad))
    _ = try? RecordCodec.openEntry(sealed, vaultID: fixture.header.vaultID, keys: fixture.keys)
    let deviceKey = fixture.deviceRecordKey
    _ = try? RecordCodec.openValue(sealed, vaultID: fixture.header.vaultID, keys: fixture.keys) {
        () throws(CredentialVaultError) in deviceKey
    }
}

/// 4. A journal entry body, chained for real, rolled forward behind an empty snapshot.
private func asJournalEntry(_ bytes: [UInt8]) {
    guard !bytes.isEmpty, bytes.count < 1 << 20 else { return }
    var header = fixture.header
    header.recordCount = 0
    let (snapshot, position) = JournaledFile.serialize(header: header, records: [CredentialKey: RecordEntry]().values, macKey: fixture.keys.macKey)
    var framed = ByteWriter()
    framed.u32(UInt32(bytes.count))
    framed.raw(bytes)
    let chain = framed.bytes.withUnsafeBytes { JournalEntry.chain(after: position.chain, framed: $0, macKey: fixture.keys.macKey) }
    var file = snapshot + framed.bytes + chain
    file[CommitRecord.offsets[1]] ^= 1  // damaged: the entry past the other one is rolled forward
    _ = try? VaultContents.decode(bytes: file, header: header, keys: fixture.keys)
}

/// With CREDVAULT_FUZZ_SEEDS=DIR, writes seeds for shapes 2 and 3 (real record tables and
/// plaintexts, made with the library's own encoder, one with an unknown created time) and exits.
private func writeSeeds(to directory: String) {
    var records: [RecordEntry] = []
    let samples: [(CredentialKey, Data, Accessibility, UInt64)] = [
        (CredentialKey(service: "fixture.example", account: "alice"), Data("portable-secret".utf8), .portable, 0),
        (CredentialKey(service: "fixture.example", account: "bob", label: "Bob's token"), Data([0, 1, 0xFF]), .deviceOnly, 0),
        (CredentialKey(service: "ünïcødé", account: "日本"), Data(), .deviceOnly, 1_900_000_000_000),
    ]
    for (n, (key, value, access, expiry)) in samples.enumerated() {
        let entry = RecordCodec.seal(
            key: key, value: value, accessibility: access, expiresAtMillis: expiry, vaultID: fixture.header.vaultID,
            keys: fixture.keys, deviceKey: access == .deviceOnly ? fixture.deviceRecordKey : nil,
            times: RecordTimes(createdMillis: n == 1 ? nil : 1_790_000_000_000, modifiedMillis: 1_800_000_000_000))
        records.append(entry)
        let plain = Crypto.open(
            entry.sealed.box, key: fixture.keys.recordKey,
            associatedData: RecordCodec.outerAD(vaultID: fixture.header.vaultID, recordID: entry.sealed.id))!
        _ = FileManager.default.createFile(atPath: "\(directory)/record-plaintext-\(n)", contents: Data(plain))
    }
    var table = ByteWriter()
    table.u32(UInt32(records.count))
    for record in records {
        table.u32(UInt32(record.sealed.id.count + record.sealed.box.count))
        table.raw(record.sealed.id)
        table.raw(record.sealed.box)
    }
    _ = FileManager.default.createFile(atPath: "\(directory)/record-table", contents: Data(table.bytes))
    // Shape 4: a journal body putting the records, then deleting the first.
    let (entry, _) = JournalEntry.encode(
        records.map { .put($0.sealed) } + [.delete(recordID: records[0].sealed.id)], after: [UInt8](repeating: 0, count: 32),
        macKey: fixture.keys.macKey)
    _ = FileManager.default.createFile(atPath: "\(directory)/journal-body", contents: Data(entry[4..<entry.count - 32]))
    _exit(0)  // not exit(): LeakSanitizer would count the seed values still in scope
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    if let directory = ProcessInfo.processInfo.environment["CREDVAULT_FUZZ_SEEDS"] { writeSeeds(to: directory) }
    _ = fixture.header
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    asVaultFile(bytes)
    asRecordTable(bytes)
    asRecordPlaintext(bytes)
    asJournalEntry(bytes)
    return 0
}
