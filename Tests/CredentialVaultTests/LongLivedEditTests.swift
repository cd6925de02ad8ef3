import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// Keyless edits seen by a process that has the vault open already (a long-lived reader or
/// writer), not only by a fresh open: its catch-up must never keep a view that a fresh reader
/// would not have, and its next save must never make an undo permanent ("launder" it) by
/// committing on top of an edited state.
@Suite(.ownThread) final class LongLivedEditTests {
    let dir = TempDirectory()
    let token = CredentialKey(service: "api.example.com", account: "revoked")
    let other = CredentialKey(service: "x", account: "y")

    typealias Vault = (url: URL, key: VaultSecret, configuration: SealedFileConfiguration)

    /// A key-file vault right after a rewrite.
    private func vaultAfterARewrite() throws -> Vault {
        let keyFile = try TestVault.keyFile(dir, name: "key")
        let store = try TestVault.create(dir, name: "vault/v.cvault", secret: .keyFile(keyFile))
        try store.save(Data("base".utf8), for: other, options: .portable)
        try store.changeSecret(from: .keyFile(keyFile), to: .keyFile(keyFile))
        return (store.url, .keyFile(keyFile), TestVault.configuration(dir))
    }

    private func open(_ vault: Vault) throws(CredentialVaultError) -> SealedFileStore {
        try SealedFileStore.open(at: vault.url, secret: vault.key, configuration: vault.configuration)
    }

    /// Writes `bytes` over the file in place (same inode, as an attacker with write access
    /// to the file would), cutting it to their length.
    private func overwrite(_ url: URL, with bytes: [UInt8]) throws {
        let fd = Glibc.open(url.path, O_WRONLY | O_TRUNC)
        try #require(fd >= 0)
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress!, $0.count, 0) }
        try #require(written == bytes.count)
    }

    private func record(_ bytes: [UInt8], _ slot: Int) -> ArraySlice<UInt8> {
        bytes[CommitRecord.offsets[slot]..<CommitRecord.offsets[slot] + CommitRecord.size]
    }

    private func replacing(_ bytes: [UInt8], _ slot: Int, with record: ArraySlice<UInt8>) -> [UInt8] {
        var edited = bytes
        edited.replaceSubrange(CommitRecord.offsets[slot]..<CommitRecord.offsets[slot] + CommitRecord.size, with: record)
        return edited
    }

    private func flipped(_ bytes: [UInt8], _ slot: Int) -> [UInt8] {
        var edited = bytes
        edited[CommitRecord.offsets[slot] + 5] ^= 4
        return edited
    }

    /// None, a flip of either record, either copied over the other (then either flipped), a
    /// swap (then either flipped).
    private func recordEdits(_ bytes: [UInt8]) -> [(String, [UInt8])] {
        var edits: [(String, [UInt8])] = [("no edit", bytes), ("record 0 flipped", flipped(bytes, 0)), ("record 1 flipped", flipped(bytes, 1))]
        for slot in 0..<2 {
            let copied = replacing(bytes, slot, with: record(bytes, 1 - slot))
            edits.append(("record \(1 - slot) copied over \(slot)", copied))
            edits += (0..<2).map { ("record \(1 - slot) copied over \(slot), \($0) flipped", flipped(copied, $0)) }
        }
        let swapped = replacing(replacing(bytes, 0, with: record(bytes, 1)), 1, with: record(bytes, 0))
        edits.append(("records swapped", swapped))
        edits += (0..<2).map { ("records swapped, \($0) flipped", flipped(swapped, $0)) }
        return edits
    }

    /// Every pair of edits around another process's delete: P opens after edit 1, Q deletes,
    /// edit 2 (with the file cut back to before Q's entry, or not); then P's view and P's save
    /// never bring the token back.
    @Test func aLongLivedProcessNeverKeepsOrLaundersAnUndo() throws {
        let vault = try vaultAfterARewrite()
        let setup = try open(vault)
        try setup.save(Data("secret token".utf8), for: token, options: .portable)
        try setup.save(Data("x".utf8), for: other, options: .portable)
        let base = try TestVault.bytes(vault.url)
        var problems: [String] = []
        for (first, edited) in recordEdits(base) {
            // One run to learn what Q's delete leaves after this first edit.
            try overwrite(vault.url, with: edited)
            guard (try? open(vault).load(token)) != nil, (try? open(vault).delete(token)) == true else { continue }
            let afterDelete = try TestVault.bytes(vault.url)
            for cut in [afterDelete.count, base.count] {
                for (second, final) in recordEdits(Array(afterDelete[..<cut])) {
                    try overwrite(vault.url, with: edited)
                    guard let p = try? open(vault), (try? p.load(token)) != nil, (try? open(vault).delete(token)) == true else { continue }
                    try overwrite(vault.url, with: final)
                    let what = "\(first); Q deletes; \(cut == base.count ? "cut back, " : "")\(second)"
                    let fresh = try? open(vault).load(token)
                    if (try? p.load(token)) != nil, fresh == nil { problems.append("\(what): P keeps a view a fresh reader does not have") }
                    _ = try? p.save(Data("p".utf8), for: CredentialKey(service: "p", account: "p"), options: .portable)
                    if case .some(.some) = try? open(vault).load(token) { problems.append("\(what): the token is back for fresh readers") }
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.count) undone: \(problems.prefix(5))")
    }
}
