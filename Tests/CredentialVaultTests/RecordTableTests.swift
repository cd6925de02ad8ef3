import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// The sealed file's write path changes the record table in place and undoes the change when
/// the write fails: memory must then be exactly as it was.
@Suite(.ownThread) final class RecordTableTests {
    let dir = TempDirectory()
    let kept = CredentialKey(service: "api.example.com", account: "alice")
    let added = CredentialKey(service: "api.example.com", account: "bob")

    private func vault() throws -> SealedFileStore {
        let store = try TestVault.create(dir, secret: .keyFile(try TestVault.keyFile(dir)))
        try store.save(Data("one".utf8), for: kept, options: .portable)
        try store.save(Data("short-lived".utf8), for: CredentialKey(service: "s", account: "e"), options: .ephemeral(ttl: .seconds(600)))
        return store
    }

    @Test func aChangeThatFailsLeavesMemoryAndFileAsTheyWere() throws {
        let store = try vault()
        let before = try TestVault.bytes(store.url)
        #expect(throws: CredentialVaultError.busy) {
            try store.mutate { (s) throws(CredentialVaultError) in
                s.contents.records[self.kept] = nil
                s.contents.records[self.added] = RecordEntry(
                    key: self.added, accessibility: .portable, expiresAtMillis: 0, sealed: SealedRecord(id: [], box: []),
                    times: RecordTimes(createdMillis: nil, modifiedMillis: 0))
                s.contents.header.generation = 99
                throw .busy
            }
        }
        #expect(try store.load(kept) == Data("one".utf8))
        #expect(try store.load(added) == nil)
        #expect(try store.listKeys() == [kept])
        #expect(try TestVault.bytes(store.url) == before)
        try store.save(Data("two".utf8), for: added, options: .portable)
        let reopened = try SealedFileStore.open(at: store.url, secret: .keyFile(dir.path("key")), configuration: TestVault.configuration(dir))
        #expect(try reopened.load(kept) == Data("one".utf8))
        #expect(try reopened.load(added) == Data("two".utf8))
    }

    @Test func aChangeReportedAsNoChangeIsUndoneAndNotWritten() throws {
        let store = try vault()
        let before = try TestVault.bytes(store.url)
        let result = try store.mutate({ s in s.contents.records.removeValue(forKey: self.kept) != nil && false }, changed: { $0 })
        #expect(result == false)
        #expect(try store.load(kept) == Data("one".utf8))
        #expect(try TestVault.bytes(store.url) == before)
    }

    @Test func rollBackRestoresValuesAndTheEphemeralCount() {
        func entry(_ account: String, ephemeral: Bool) -> RecordEntry {
            RecordEntry(
                key: CredentialKey(service: "s", account: account), accessibility: .deviceOnly,
                expiresAtMillis: ephemeral ? 1 : 0, sealed: SealedRecord(id: Array(account.utf8), box: []),
                times: RecordTimes(createdMillis: nil, modifiedMillis: 0))
        }
        let a = entry("a", ephemeral: false), b = entry("b", ephemeral: true)
        var table = RecordTable([a.key: a, b.key: b])
        #expect(table.ephemeralCount == 1)
        table.beginChanges()
        table[a.key] = entry("a", ephemeral: true)
        table[a.key] = nil
        table.removeValue(forKey: b.key)
        table[CredentialKey(service: "s", account: "c")] = entry("c", ephemeral: true)
        #expect(table.count == 1 && table.ephemeralCount == 1)
        table.rollBack()
        #expect(table.count == 2 && table.ephemeralCount == 1)
        #expect(table[a.key]?.sealed == a.sealed && table[a.key]?.isEphemeral == false)
        #expect(table[b.key]?.sealed == b.sealed)
        table.beginChanges()
        table[b.key] = nil
        table.commit()
        table.rollBack()
        #expect(table.count == 1 && table.ephemeralCount == 0)
    }
}
