import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// Edits of a journaled vault that need no key (docs/FORMAT.md, *What a reader accepts*): a
/// commit record copied over the other, the two swapped, a bit flipped, the file cut back, and
/// those combined. Each one is detected, or the vault reads exactly as it was written: never a
/// silently undone write, a deleted credential back, or a value already taken available again.
@Suite(.ownThread) final class KeylessEditTests {
    let dir = TempDirectory()
    let token = CredentialKey(service: "api.example.com", account: "deploy")
    let revoked = CredentialKey(service: "api.example.com", account: "revoked")
    let verifier = CredentialKey(service: "oidc", account: "state-1")

    typealias Content = [CredentialKey: Data]

    private lazy var keyFile: URL = try! TestVault.keyFile(dir)

    private func open(_ url: URL) throws(CredentialVaultError) -> SealedFileStore {
        try SealedFileStore.open(at: url, secret: .keyFile(keyFile), configuration: TestVault.configuration(dir))
    }

    private func content(_ store: SealedFileStore) throws(CredentialVaultError) -> Content {
        var all: Content = [:]
        for key in try store.listKeys() { all[key] = try store.load(key) }
        // Ephemeral records are never listed: look for the single-use one by name.
        if let value = try store.load(verifier) { all[verifier] = value }
        return all
    }

    /// What the edited file reads as, or the error it gives.
    private func read(_ bytes: [UInt8], at url: URL) -> Result<Content, CredentialVaultError> {
        Result { () throws(CredentialVaultError) -> Content in
            do { try TestVault.write(bytes, to: url) } catch { throw .io("cannot write the test file") }
            return try content(try open(url))
        }
    }

    /// A vault after a rewrite and `saves` more writes, the last ones a delete and a `take`, so
    /// that undoing them would bring back what must stay gone.
    private func vault(_ name: String, savesAfterRewrite saves: Int) throws -> (url: URL, bytes: [UInt8], content: Content) {
        let (url, bytes, content, _) = try vaultWithEnds(name, savesAfterRewrite: saves)
        return (url, bytes, content)
    }

    /// `vault`, and the file's size after the rewrite and after each save (the entries' ends).
    /// With `counter`, a vault with a rollback counter (the counter fields are checked too).
    private func vaultWithEnds(_ name: String, savesAfterRewrite saves: Int, counter: Bool = false) throws -> (URL, [UInt8], Content, [Int]) {
        var configuration = TestVault.configuration(dir)
        configuration.rollbackCounter = counter
        let store = try SealedFileStore.create(
            at: dir.path("\(name)/v.cvault"), secret: .keyFile(keyFile), kdf: TestVault.kdf, configuration: configuration)
        try store.save(Data("to be revoked".utf8), for: revoked, options: .portable)
        try store.save(Data("single use".utf8), for: verifier, options: .ephemeral(ttl: .seconds(600)))
        try store.changeSecret(from: .keyFile(keyFile), to: .keyFile(keyFile))  // a rewrite: a fresh snapshot
        let steps: [() throws -> Void] = [
            { try self.store(store, "v1") },
            { _ = try store.delete(self.revoked) },
            { _ = try store.take(self.verifier) },
            { try self.store(store, "v2") },
            { try self.store(store, "v3") },
        ]
        var ends = [try TestVault.bytes(store.url).count]
        for step in steps.prefix(saves) {
            try step()
            ends.append(try TestVault.bytes(store.url).count)
        }
        let bytes = try TestVault.bytes(store.url)
        return (store.url, bytes, try content(open(store.url)), ends)
    }

    private func store(_ store: SealedFileStore, _ value: String) throws {
        try store.save(Data(value.utf8), for: token, options: .portable)
    }

    private func commitRecord(_ bytes: [UInt8], _ slot: Int) -> ArraySlice<UInt8> {
        bytes[CommitRecord.offsets[slot]..<CommitRecord.offsets[slot] + CommitRecord.size]
    }

    private func replacing(_ bytes: [UInt8], slot: Int, with record: ArraySlice<UInt8>) -> [UInt8] {
        var edited = bytes
        edited.replaceSubrange(CommitRecord.offsets[slot]..<CommitRecord.offsets[slot] + CommitRecord.size, with: record)
        return edited
    }

    /// Every edit of the two commit records alone, then every cut of the journal combined
    /// with none, a flip of either record, a copy of either over the other, and a swap.
    /// Cuts are made at each entry's end (`ends`), one byte either side, and every 23rd byte.
    private func edits(of bytes: [UInt8], snapshotEnd: Int, ends: [Int] = []) -> [(String, [UInt8])] {
        var edits: [(String, [UInt8])] = []
        func recordEdits(_ base: [UInt8], _ what: String) {
            for slot in 0..<2 {
                edits.append(("\(what), record \(1 - slot) copied over record \(slot)", replacing(base, slot: slot, with: commitRecord(base, 1 - slot))))
                for bit in stride(from: 0, to: CommitRecord.size * 8, by: what.isEmpty ? 1 : 29) {
                    var flipped = base
                    flipped[CommitRecord.offsets[slot] + bit / 8] ^= UInt8(1 << (bit % 8))
                    edits.append(("\(what), bit \(bit) of record \(slot) flipped", flipped))
                }
            }
            let swapped = replacing(replacing(base, slot: 0, with: commitRecord(base, 1)), slot: 1, with: commitRecord(base, 0))
            edits.append(("\(what), records swapped", swapped))
        }
        recordEdits(bytes, "")
        let boundaries = ends.flatMap { [$0 - 1, $0, $0 + 1] } + Array(stride(from: snapshotEnd - 1, to: bytes.count, by: 23))
        for length in Set(boundaries).filter({ $0 >= snapshotEnd - 1 && $0 < bytes.count }).sorted() {
            let cut = Array(bytes[..<length])
            edits.append(("cut to \(length)", cut))
            recordEdits(cut, "cut to \(length)")
        }
        return edits
    }

    private func snapshotEnd(_ url: URL) throws -> Int {
        try open(url).state.withLock { $0.contents.journal.snapshotEnd }
    }

    /// A vault 0 to 5 saves after a rewrite: every keyless edit is detected or changes nothing.
    /// (On main at 59df243, copying the older record over the newer and cutting the file back
    /// with the newer record flipped both undid the last write silently.) A vault with a rollback
    /// counter is swept at 0 and 3 saves.
    @Test(arguments: (0...5).map { ($0, false) } + [(0, true), (3, true)])
    func everyKeylessEditIsDetectedOrChangesNothing(saves: Int, counter: Bool) throws {
        let (url, bytes, written, ends) = try vaultWithEnds("saves-\(saves)-\(counter)", savesAfterRewrite: saves, counter: counter)
        #expect((bytes[VaultHeader.Offset.flags] == VaultHeader.rollbackCounterFlag) == counter)
        let end = try snapshotEnd(url)
        var detected = 0
        for (what, edited) in edits(of: bytes, snapshotEnd: end, ends: ends) {
            switch read(edited, at: url) {
            case .failure: detected += 1
            case .success(let read):
                #expect(read == written, "\(what): the vault opened with other content (\(read.count) vs \(written.count) credentials)")
            }
        }
        #expect(detected > 0)
        #expect(try read(bytes, at: url).get() == written, "the unedited file still opens")
    }

    /// The two attacks on a taken verifier, spelt out: neither brings back the taken verifier. The
    /// copied record fails its MAC in its new slot, so the older record and the entry after it
    /// give the state last written; the cut leaves a damaged record that no crash explains.
    @Test func aTakenValueCannotBeTakenAgainAfterAnEdit() throws {
        let (url, bytes, written) = try vault("take", savesAfterRewrite: 3)
        #expect(written[verifier] == nil && written[revoked] == nil)
        let newest = try #require((0..<2).max { a, b in
            generation(bytes, a, url) ?? 0 < generation(bytes, b, url) ?? 0
        })
        let older = 1 - newest
        // 1. The older commit record copied over the newer (88 bytes).
        let copied = replacing(bytes, slot: newest, with: commitRecord(bytes, older))
        #expect(try read(copied, at: url).get() == written)
        // 2. The file cut back to the older commit's end, and one bit of the newer one flipped.
        let olderEnd = try #require(commitRecordState(bytes, older, url)?.journalEnd)
        var cut = Array(bytes[..<Int(olderEnd)])
        cut[CommitRecord.offsets[newest] + 3] ^= 0x10
        #expect(throws: CredentialVaultError.tampered) { try self.read(cut, at: url).get() }
    }

    /// A vault whose last commit was torn, then repaired by the next save: every edit of that
    /// state is detected or changes nothing too (repairing keeps two intact records one
    /// generation apart: committing over the damaged record instead would leave two, and a cut
    /// plus a flip could then roll back to the state between).
    @Test func editsAfterATornCommitAreDetectedOrChangeNothing() throws {
        let (url, before, _) = try vault("torn", savesAfterRewrite: 3)
        let store = try open(url)
        try self.store(store, "committed over the torn record")
        let after = try TestVault.bytes(url)
        let slot = try #require((0..<2).first { commitRecord(before, $0) != commitRecord(after, $0) })
        var torn = after
        for i in CommitRecord.offsets[slot] + 40..<CommitRecord.offsets[slot] + CommitRecord.size { torn[i] = before[i] }
        try TestVault.write(torn, to: url)
        try self.store(try open(url), "v4")  // repairs the torn record, then commits
        let bytes = try TestVault.bytes(url)
        let written = try content(open(url))
        #expect(written[token] == Data("v4".utf8))
        let generations = (0..<2).compactMap { generation(bytes, $0, url) }
        #expect(generations.count == 2 && generations.max()! - generations.min()! == 1, "\(generations)")
        for (what, edited) in edits(of: bytes, snapshotEnd: try snapshotEnd(url)) {
            if case .success(let read) = read(edited, at: url) {
                #expect(read == written, "\(what): the vault opened with other content")
            }
        }
    }

    /// Residue of a save killed before its commit, after the newest commit: an edit may at most
    /// complete that save (what a power cut tearing its commit would have done), never undo one.
    @Test func editsWithResidueAtMostCompleteTheInterruptedSave() throws {
        let (url, bytes, written) = try vault("residue", savesAfterRewrite: 4)
        let store = try open(url)
        try self.store(store, "interrupted")
        let completed = try content(open(url))
        let withEntry = try TestVault.bytes(url)
        let crashed = bytes + withEntry[bytes.count...]  // the entry durable, its commit never written
        try TestVault.write(crashed, to: url)
        #expect(try content(open(url)) == written, "residue is ignored")
        for (what, edited) in edits(of: crashed, snapshotEnd: try snapshotEnd(url)) {
            if case .success(let read) = read(edited, at: url) {
                #expect(read == written || read == completed, "\(what): the vault opened with other content")
            }
        }
    }

    /// Two intact commit records naming the same generation come only from a rewrite, which
    /// names the snapshot; anywhere else they are tampered. Checked on the rules directly: a
    /// file cannot hold them (a record copied into the other slot fails its MAC there).
    @Test func twoEqualRecordsOutsideTheSnapshotAreTampered() throws {
        let snapshot = CommitRecord(generation: 7, journalEnd: 12_400, recordCount: 2, chain: Array(repeating: 1, count: 32))
        let later = CommitRecord(generation: 8, journalEnd: 12_500, recordCount: 3, chain: Array(repeating: 2, count: 32))
        #expect(try CommitRules.choose([snapshot, snapshot], snapshot: snapshot).newest == snapshot)
        #expect(throws: CredentialVaultError.tampered) { try CommitRules.choose([later, later], snapshot: snapshot) }
        var farther = later
        farther.generation = 9
        #expect(throws: CredentialVaultError.tampered) { try CommitRules.choose([snapshot, farther], snapshot: snapshot) }
        #expect(throws: CredentialVaultError.tampered) { try CommitRules.choose([nil, nil], snapshot: snapshot) }
        #expect(try CommitRules.choose([snapshot, later], snapshot: snapshot).newestSlot == 1)
    }

    private func commitRecordState(_ bytes: [UInt8], _ slot: Int, _ url: URL) -> CommitRecord? {
        guard let store = try? open(url) else { return nil }
        let macKey = store.state.withLock { $0.keys.macKey }
        return bytes.withUnsafeBytes { CommitRecord.decodeBoth($0, macKey: macKey)[slot] }
    }

    private func generation(_ bytes: [UInt8], _ slot: Int, _ url: URL) -> UInt64? {
        commitRecordState(bytes, slot, url)?.generation
    }
}
