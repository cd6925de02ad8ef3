import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// The journal: what a save writes, what each crash point leaves and how it reads, and
/// when the file is rewritten.
@Suite(.ownThread) final class JournalTests {
    let dir = TempDirectory()
    let a = CredentialKey(service: "s", account: "a")
    let b = CredentialKey(service: "s", account: "b")

    private func open(_ url: URL) throws -> SealedFileStore {
        try SealedFileStore.open(at: url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir))
    }

    private func everything(_ store: SealedFileStore) throws -> [CredentialKey: Data] {
        var all: [CredentialKey: Data] = [:]
        for key in try store.listKeys() { all[key] = try store.load(key) }
        return all
    }

    private func inode(_ url: URL) -> UInt64? { AtomicFile.fingerprint(FileLocation(path: url.path))?.inode }

    /// The file before and after one save of `b` (the vault already holds `a`).
    private func beforeAndAfterOneSave() throws -> (store: SealedFileStore, before: [UInt8], after: [UInt8]) {
        let store = try TestVault.create(dir)
        try store.save(Data("first".utf8), for: a, options: .portable)
        let before = try TestVault.bytes(store.url)
        try store.save(Data("second".utf8), for: b, options: .portable)
        return (store, before, try TestVault.bytes(store.url))
    }

    @Test func aSaveAppendsOneEntryAndRewritesOneCommitRecordInPlace() throws {
        let (store, before, after) = try beforeAndAfterOneSave()
        let inodeBefore = inode(store.url)
        try store.save(Data("third".utf8), for: a, options: .portable)
        let third = try TestVault.bytes(store.url)
        #expect(inode(store.url) == inodeBefore, "no new file: the save was made in place")
        #expect(third.count > after.count && third.count - after.count < 300, "one small entry appended")
        // Everything before the old end is unchanged but one commit record.
        let changed = (0..<after.count).filter { after[$0] != third[$0] }
        let commitRecords = CommitRecord.offsets.map { $0..<$0 + CommitRecord.size }
        #expect(!changed.isEmpty && changed.allSatisfy { p in commitRecords.contains { $0.contains(p) } })
        #expect(Set(changed.map { p in commitRecords.firstIndex { $0.contains(p) }! }).count == 1, "exactly one commit record")
        // The two saves before wrote the two commit records in turn.
        let firstChanged = (0..<before.count).filter { before[$0] != after[$0] }
        #expect(Set(firstChanged.map { p in commitRecords.firstIndex { $0.contains(p) } }) != Set(changed.map { p in commitRecords.firstIndex { $0.contains(p) } }))
        #expect(try everything(open(store.url)) == [a: Data("third".utf8), b: Data("second".utf8)])
    }

    /// Killed after appending the entry, before the commit record: both commit records are
    /// intact and name the state before, so that is what the vault reads; the next save
    /// overwrites the orphan entry.
    @Test func anUncommittedEntryIsIgnoredAndOverwritten() throws {
        let (store, before, after) = try beforeAndAfterOneSave()
        let crashed = before + after[before.count...]
        try TestVault.write(crashed, to: store.url)
        let reopened = try open(store.url)
        #expect(try everything(reopened) == [a: Data("first".utf8)])
        let c = CredentialKey(service: "s", account: "c")
        try reopened.save(Data("after the crash".utf8), for: c, options: .portable)
        #expect(try everything(open(store.url)) == [a: Data("first".utf8), c: Data("after the crash".utf8)])
    }

    /// Power lost while the commit record was written: it fails its MAC. Its entry was durable
    /// before, so the vault reads the save (rolled forward), and the next save repairs it.
    @Test func aTornCommitRecordRollsTheDurableEntryForward() throws {
        let (store, before, after) = try beforeAndAfterOneSave()
        guard let slot = CommitRecord.offsets.first(where: { before[$0..<$0 + CommitRecord.size] != after[$0..<$0 + CommitRecord.size] }) else {
            Issue.record("no commit record changed")
            return
        }
        var torn = after
        for i in slot + 40..<slot + CommitRecord.size { torn[i] = before[i] }  // half old, half new
        try TestVault.write(torn, to: store.url)
        let reopened = try open(store.url)
        #expect(try everything(reopened) == [a: Data("first".utf8), b: Data("second".utf8)])
        try reopened.save(Data("repaired".utf8), for: a, options: .portable)
        let repaired = try TestVault.bytes(store.url)
        let macKey = reopened.state.withLock { $0.keys.macKey }
        let generations = CommitRecord.offsets.compactMap { offset in
            repaired.withUnsafeBytes {
                CommitRecord.decode(
                    UnsafeRawBufferPointer(rebasing: $0[offset..<offset + CommitRecord.size]), macKey: macKey,
                    slot: CommitRecord.offsets.firstIndex(of: offset)!)
            }?.generation
        }
        // The torn record was repaired (naming the rolled-forward save) before the new entry was
        // appended and committed into the other one: two intact records, one generation apart.
        #expect(generations.count == 2 && generations.max()! - generations.min()! == 1, "\(generations)")
        #expect(try everything(open(store.url)) == [a: Data("repaired".utf8), b: Data("second".utf8)])
    }

    /// A torn append (the entry cut short) is residue: ignored, then cut by the next save.
    @Test func aTornEntryIsResidueAndCutByTheNextSave() throws {
        let (store, before, after) = try beforeAndAfterOneSave()
        for cut in [1, 4, 30, after.count - before.count - 1] {
            try TestVault.write(before + after[before.count..<before.count + cut], to: store.url)
            let reopened = try open(store.url)
            #expect(try everything(reopened) == [a: Data("first".utf8)])
        }
        let reopened = try open(store.url)
        try reopened.save(Data("clean".utf8), for: b, options: .portable)
        let bytes = try TestVault.bytes(store.url)
        let committedEnd = reopened.state.withLock { $0.contents.journal.end }
        #expect(bytes.count == committedEnd && bytes.count == after.count, "no residue left behind (both values pad alike)")
        #expect(try everything(open(store.url)) == [a: Data("first".utf8), b: Data("clean".utf8)])
    }

    /// Another handle (another process) reads what this one appended without re-reading the
    /// whole file, and sees deletes and replacements too.
    @Test func anotherHandleCatchesUpWithAppendedEntries() throws {
        let writer = try TestVault.create(dir)
        let reader = try open(writer.url)
        for round in 0..<50 {
            try writer.save(Data("v\(round)".utf8), for: a, options: .portable)
            if round % 3 == 0 { try writer.save(Data("b\(round)".utf8), for: b, options: .default) }
            if round % 5 == 0 { try writer.delete(b) }
            #expect(try reader.load(a) == Data("v\(round)".utf8))
            #expect(try reader.load(b) == (try writer.load(b)))
            #expect(reader.state.withLock { $0.contents.journal } == writer.state.withLock { $0.contents.journal })
        }
    }

    /// The journal is compacted into a new snapshot once it outgrows the old one: the file
    /// stays bounded however many saves it takes, and reads the same.
    @Test func theJournalIsCompactedWhenItOutgrowsTheSnapshot() throws {
        let store = try TestVault.create(dir, secret: .keyFile(try TestVault.keyFile(dir)))
        let value = Data(repeating: 0x5A, count: 200)
        var inodes: Set<UInt64> = []
        var largest = 0
        for round in 0..<1_000 {
            try store.save(value + Data("\(round)".utf8), for: CredentialKey(service: "s", account: "\(round % 7)"), options: .portable)
            inodes.insert(inode(store.url) ?? 0)
            largest = max(largest, try TestVault.bytes(store.url).count)
        }
        #expect(inodes.count >= 2, "at least one rewrite")
        #expect(largest <= JournaledFile.minimumSize + 7 * 400 + SealedFileStore.minimumJournalLimit + 400)
        let reopened = try SealedFileStore.open(at: store.url, secret: .keyFile(dir.path("key")), configuration: TestVault.configuration(dir))
        #expect(try reopened.load(CredentialKey(service: "s", account: "\(999 % 7)")) == value + Data("999".utf8))
        #expect(try reopened.listKeys().count == 7)
    }

    /// A state at the last generation (2^64 - 1, which only a file written elsewhere reaches)
    /// has no next generation to commit an entry with: the save rewrites the file instead,
    /// starting again at 0, and later saves append as usual. (An append trapped on the
    /// overflow: a save crashed the process.)
    @Test func aSaveAtTheLastGenerationRewritesTheFileInsteadOfOverflowing() throws {
        let store = try TestVault.create(dir)
        try store.save(Data("first".utf8), for: a, options: .portable)
        try store.mutate { (s) throws(CredentialVaultError) in
            s.contents.journal.generation = UInt64.max - 1
            s.rewriteRequested = true  // the rewrite takes the next generation: the last one
        }
        let last = try TestVault.bytes(store.url)
        let generation = VaultHeader.Offset.generation
        #expect(last[generation..<generation + 8].allSatisfy { $0 == 0xFF }, "the snapshot is at generation 2^64 - 1")
        let inodeAtLast = inode(store.url)

        try store.save(Data("second".utf8), for: b, options: .portable)
        #expect(inode(store.url) != inodeAtLast, "rewritten, not appended to")
        #expect(try TestVault.bytes(store.url)[generation..<generation + 8].allSatisfy { $0 == 0 }, "the rewrite starts again at 0")
        let c = CredentialKey(service: "s", account: "c")
        try store.save(Data("third".utf8), for: c, options: .portable)
        #expect(try everything(open(store.url)) == [a: Data("first".utf8), b: Data("second".utf8), c: Data("third".utf8)])
    }

    /// A torn commit record is repaired before anything else is appended, so exactly one entry
    /// follows an intact record while the other is damaged: the torn save's. A second complete
    /// entry after it (here c's, as if appended without that repair) is a state no crash
    /// leaves: tampered, not rolled forward nor cut as residue.
    @Test func aSecondEntryPastATornCommitIsTampered() throws {
        let (store, before, after) = try beforeAndAfterOneSave()
        let c = CredentialKey(service: "s", account: "c")
        try store.save(Data("appended without a repair".utf8), for: c, options: .portable)
        let third = try TestVault.bytes(store.url)
        guard let slot = CommitRecord.offsets.first(where: { before[$0..<$0 + CommitRecord.size] != after[$0..<$0 + CommitRecord.size] }) else {
            Issue.record("no commit record changed")
            return
        }
        var crashed = after + third[after.count...]  // b committed, c appended but never committed
        for i in slot + 40..<slot + CommitRecord.size { crashed[i] = before[i] }  // and b's commit torn
        try TestVault.write(crashed, to: store.url)
        #expect(throws: CredentialVaultError.tampered) { try self.open(store.url) }
        // With b's commit intact, c's entry is the residue of one interrupted save: ignored.
        try TestVault.write(after + third[after.count...], to: store.url)
        #expect(try everything(open(store.url)) == [a: Data("first".utf8), b: Data("second".utf8)])
    }

    /// A writer appends after the commit records it checks under the lock, not after what it
    /// last read: one whose view is stale but whose fingerprint looks current (a file system
    /// without fine-grained times, attribute caching) still keeps the other process's save.
    @Test func aWriterWithAStaleViewStillAppendsAfterTheLastCommit() throws {
        let writer = try TestVault.create(dir)
        let stale = try open(writer.url)
        try writer.save(Data("one".utf8), for: a, options: .portable)
        _ = try stale.load(a)
        try writer.save(Data("two".utf8), for: a, options: .portable)
        // Make `stale` believe nothing changed since it last read.
        stale.state.withLock { $0.fingerprint = AtomicFile.fingerprint(FileLocation(path: writer.url.path)) }
        try stale.save(Data("mine".utf8), for: b, options: .portable)
        #expect(try everything(open(writer.url)) == [a: Data("two".utf8), b: Data("mine".utf8)])
    }

    /// A reader without the lock copies the file page by page: here it got commit record 0
    /// before two saves and commit record 1 and the journal after them, which the reader rules
    /// reject. It reads the file again and decodes what it finds then, instead of reporting
    /// `tampered`; a file that is damaged and stays so is still reported.
    @Test func aLockFreeReadAcrossTwoCommitsIsReadAgain() throws {
        let writer = try TestVault.create(dir)
        try writer.save(Data("1".utf8), for: a, options: .portable)
        if writer.state.withLock({ $0.contents.journal.newestSlot }) == 0 { try writer.save(Data("2".utf8), for: a, options: .portable) }
        let head = try TestVault.bytes(writer.url).prefix(CommitRecord.offsets[1])
        try writer.save(Data("3".utf8), for: a, options: .portable)
        try writer.save(Data("4".utf8), for: a, options: .portable)
        let tail = try TestVault.bytes(writer.url).suffix(from: CommitRecord.offsets[1])
        let seen = Array(head) + Array(tail)
        let (header, keys, location) = writer.state.withLock { ($0.contents.header, $0.keys, writer.location) }
        #expect(throws: CredentialVaultError.tampered) { try VaultContents.decode(bytes: seen, header: header, keys: keys) }
        let fingerprint = try #require(AtomicFile.fingerprint(location))
        let (contents, _) = try VaultContents.decodeUnlocked(bytes: seen, fingerprint: fingerprint, header: header, keys: keys, location: location)
        #expect(contents.journal == writer.state.withLock { $0.contents.journal })
        // The same torn view, but the file was compacted (renamed over) before the second read:
        // the new file, same vault and key, is read instead.
        let inodeBefore = fingerprint.inode
        try writer.save(Data(repeating: 0x42, count: 70_000), for: b, options: .portable)  // past the journal limit
        #expect(AtomicFile.fingerprint(location)?.inode != inodeBefore, "a rewrite")
        let (compacted, _) = try VaultContents.decodeUnlocked(bytes: seen, fingerprint: fingerprint, header: header, keys: keys, location: location)
        #expect(compacted.records.count == 2 && compacted.journal == writer.state.withLock { $0.contents.journal })
        // Damaged on disk (a commit record copied over the other, then the newer flipped): stays tampered.
        let fingerprintNow = try #require(AtomicFile.fingerprint(location))
        let headerNow = writer.state.withLock { $0.contents.header }
        var damaged = try TestVault.bytes(writer.url)
        for slot in 0..<2 { damaged[CommitRecord.offsets[slot] + 7] ^= 1 }
        try TestVault.write(damaged, to: writer.url)
        #expect(throws: CredentialVaultError.tampered) {
            try VaultContents.decodeUnlocked(bytes: damaged, fingerprint: fingerprintNow, header: headerNow, keys: keys, location: location)
        }
    }
}
