import CredentialVaultTestSupport
import CredentialVaultTesting
import Foundation
import Testing

@testable import CredentialVault
@testable import CredentialVaultTPM

/// The history of a vault before its move to TPM custody is anchored in the TPM: a copy from
/// before the move names the file custodian, whose state (the counter file, the `.protected`
/// mark) whoever writes the user's files can remove or put back; the TPM's counter of the vault,
/// found from the vault id alone, refuses that copy whatever those files say. Each test has a
/// swtpm of its own.
@Suite(.enabled(if: SoftwareTPM.isAvailable, "needs swtpm (scripts/test.sh starts scripts/services/swtpm.sh)"))
final class TPMCustodyAnchorTests {
    let tpm: SoftwareTPM

    init() async throws { tpm = try await offThePool { try SoftwareTPM() } }

    let before = CredentialKey(service: "anchor", account: "before")

    func custodian(_ setup: CustodySuite.Setup, tcti: String? = nil) -> TPMCustodian {
        TPMCustodian(configuration: TPMConfiguration(
            tcti: tcti ?? tpm.tcti, directory: setup.directory.appendingPathComponent("state").path, deadline: TPMTest.deadline))
    }

    /// A file-custody vault (with its own file counter or none) holding `before`, and what
    /// the user's files were then: that copy of the vault and of its custody state, in a setup
    /// that offers this test's TPM custodian.
    func fileVault(
        counter: Bool, _ body: (CustodySuite.Setup, SealedFileStore, UserFiles) throws -> Void
    ) throws {
        var setup = try CustodySuite.Setup.scratch(custody: .file, custodians: [])
        defer { setup.remove() }
        setup.configuration.rollbackCounter = counter
        setup.configuration.custodians = [custodian(setup)]
        let url = setup.directory.appendingPathComponent("v.cvault")
        let store = try SealedFileStore.create(at: url, secret: setup.secret, kdf: .insecureTestingOnly, configuration: setup.configuration)
        try store.save(Data("before the move".utf8), for: before, options: .default)
        try body(setup, store, try UserFiles(setup, vault: url))
    }

    /// A copy of the vault and of the custody state beside the host secret (the counter files
    /// and marks: `state/counters`), and putting them back: what whoever writes the user's
    /// files can do with a backup of them.
    struct UserFiles {
        let vault: Data
        let counters: URL
        let saved: URL

        init(_ setup: CustodySuite.Setup, vault url: URL) throws {
            vault = try Data(contentsOf: url)
            counters = setup.directory.appendingPathComponent("state/counters")
            saved = setup.directory.appendingPathComponent("saved-counters")
            if FileManager.default.fileExists(atPath: counters.path) { try FileManager.default.copyItem(at: counters, to: saved) }
        }

        func putBack(at url: URL) throws {
            try? FileManager.default.removeItem(at: counters)
            if FileManager.default.fileExists(atPath: saved.path) { try FileManager.default.copyItem(at: saved, to: counters) }
            try FileManager.default.removeItem(at: url)
            try vault.write(to: url)
            chmod(url.path, 0o600)
        }
    }

    func isAnchorRefusal(_ error: any Error) -> Bool {
        guard case .rolledBack(let message) = error as? CredentialVaultError else { return false }
        return message.contains("the tpm custodian holds this vault's rollback counter") && message.contains("accept-restore")
    }

    @Test(arguments: [false, true])
    func aCopyFromBeforeTheMoveIsRefusedWhateverTheUsersFilesSay(fileCounter: Bool) async throws {
        try await offThePool { [self] in
            try fileVault(counter: fileCounter) { setup, store, preMove in
                try store.changeCustody(to: .tpm, secret: setup.secret)
                try store.save(Data("after the move".utf8), for: before, options: .default)
                try preMove.putBack(at: store.url)
                #expect { _ = try SealedFileStore.open(at: store.url, secret: setup.secret, configuration: setup.configuration) } throws: {
                    self.isAnchorRefusal($0)
                }
                // Without the TPM to ask, the same files open as the pre-move vault: the refusal
                // above comes from the TPM alone.
                var withoutTPM = setup.configuration
                withoutTPM.custodians = []
                let opened = try SealedFileStore.open(at: store.url, secret: setup.secret, configuration: withoutTPM)
                #expect(try opened.load(before) == Data("before the move".utf8))
            }
        }
    }

    /// `accept-restore` keeps the pre-move copy as the vault (file custody, as it says) and
    /// releases the TPM's counter; the vault then opens and can move to the TPM again.
    @Test func acceptRestoreKeepsThePreMoveCopyAndReleasesTheTPMCounter() async throws {
        try await offThePool { [self] in
            try fileVault(counter: false) { setup, store, preMove in
                try store.changeCustody(to: .tpm, secret: setup.secret)
                let vaultID = try LockedVault(url: store.url).header.vaultID
                let tpmCustodian = custodian(setup)
                #expect(try tpmCustodian.anchoredCounter(vaultID: vaultID) != nil)
                try preMove.putBack(at: store.url)
                let accepted = try SealedFileStore.acceptRestore(at: store.url, secret: setup.secret, configuration: setup.configuration)
                #expect(try accepted.load(before) == Data("before the move".utf8))
                #expect(accepted.custody == .file)
                #expect(try tpmCustodian.anchoredCounter(vaultID: vaultID) == nil)
                let reopened = try SealedFileStore.open(at: store.url, secret: setup.secret, configuration: setup.configuration)
                try reopened.changeCustody(to: .tpm, secret: setup.secret)
                #expect(try SealedFileStore.open(at: store.url, secret: setup.secret, configuration: setup.configuration).custody == .tpm)
            }
        }
    }

    /// A move that made the TPM counter and stopped before the file was written leaves the
    /// vault refused (the state an interrupted move and a rolled-back copy share), until
    /// accepted.
    @Test func aMoveInterruptedAfterTheTPMCounterIsRefusedUntilAccepted() async throws {
        try await offThePool { [self] in
            try fileVault(counter: true) { setup, store, _ in
                let vaultID = try LockedVault(url: store.url).header.vaultID
                let binding = try setup.configuration.resolvedDevice().custodianBinding(need: { .none })
                _ = try custodian(setup).createCounter(vaultID: vaultID, binding: binding)
                #expect { _ = try SealedFileStore.open(at: store.url, secret: setup.secret, configuration: setup.configuration) } throws: {
                    self.isAnchorRefusal($0)
                }
                _ = try SealedFileStore.acceptRestore(at: store.url, secret: setup.secret, configuration: setup.configuration)
                let opened = try SealedFileStore.open(at: store.url, secret: setup.secret, configuration: setup.configuration)
                #expect(try opened.load(before) == Data("before the move".utf8))
            }
        }
    }

    /// Moving out of TPM custody releases the TPM's counter: the moved vault opens with the TPM
    /// still offered.
    @Test func movingOutOfTPMCustodyReleasesTheAnchor() async throws {
        try await offThePool { [self] in
            try fileVault(counter: false) { setup, store, _ in
                try store.changeCustody(to: .tpm, secret: setup.secret)
                try store.changeCustody(to: .file, secret: setup.secret)
                let vaultID = try LockedVault(url: store.url).header.vaultID
                #expect(try custodian(setup).anchoredCounter(vaultID: vaultID) == nil)
                let opened = try SealedFileStore.open(at: store.url, secret: setup.secret, configuration: setup.configuration)
                #expect(try opened.load(before) == Data("before the move".utf8))
            }
        }
    }

    /// A TPM that cannot be reached holds nothing of this user's: file-custody vaults open.
    @Test func anUnreachableTPMHoldsNoCounter() async throws {
        try await offThePool { [self] in
            try fileVault(counter: false) { setup, store, _ in
                var configuration = setup.configuration
                configuration.custodians = [custodian(setup, tcti: "swtpm:path=\(setup.directory.path)/no-tpm")]
                let vaultID = try LockedVault(url: store.url).header.vaultID
                #expect(try configuration.custodians[0].anchoredCounter(vaultID: vaultID) == nil)
                let opened = try SealedFileStore.open(at: store.url, secret: setup.secret, configuration: configuration)
                #expect(try opened.load(before) == Data("before the move".utf8))
            }
        }
    }

    /// An index the vault id proposes that holds a counter without this vault's tag (a counter
    /// made before tags, or another program's with the same attributes) is not its anchor.
    @Test func aCounterWithoutTheVaultsTagIsNoAnchor() async throws {
        try await offThePool { [self] in
            try fileVault(counter: false) { setup, store, _ in
                let vaultID = try LockedVault(url: store.url).header.vaultID
                let index = TPMBinding.counterIndices(vaultID: vaultID)[0]
                _ = try tpm.tool("tpm2_nvdefine", [
                    "0x" + String(index, radix: 16), "-C", "o", "-s", "8", "-a", "nt=counter|authread|authwrite|ownerread|no_da",
                ])
                #expect(try custodian(setup).anchoredCounter(vaultID: vaultID) == nil)
                #expect(try SealedFileStore.open(at: store.url, secret: setup.secret, configuration: setup.configuration).custody == .file)
            }
        }
    }
}

/// A store that stays open across the move (a server, a long-running application) reads the
/// file again when another process replaced it: a pre-move copy put back then is refused there
/// too, not only by a fresh open.
extension TPMCustodyAnchorTests {
    @Test func aStoreOpenedBeforeTheMoveRefusesThePreMoveCopyPutBackLater() async throws {
        try await offThePool { [self] in
            try fileVault(counter: true) { setup, early, preMove in
                try moveToTPMThroughAnotherStore(early, setup)
                try preMove.putBack(at: early.url)
                expectRefusesReadsAndWrites(early)
            }
        }
    }
}

extension TPMCustodyAnchorTests {
    /// Another store of the same vault (another process, as far as `store` can tell) moves it to
    /// TPM custody and saves once more.
    fileprivate func moveToTPMThroughAnotherStore(_ store: SealedFileStore, _ setup: CustodySuite.Setup) throws {
        let mover = try SealedFileStore.open(at: store.url, secret: setup.secret, configuration: setup.configuration)
        try mover.changeCustody(to: .tpm, secret: setup.secret)
        try mover.save(Data("after the move".utf8), for: before, options: .default)
    }

    /// `store` refuses both a read and a write as a copy from before the move.
    fileprivate func expectRefusesReadsAndWrites(_ store: SealedFileStore) {
        #expect { _ = try store.load(before) } throws: { self.isAnchorRefusal($0) }
        #expect { try store.save(Data("into the old copy".utf8), for: before, options: .default) } throws: {
            self.isAnchorRefusal($0)
        }
    }
}

/// The same, with the pre-move copy put back on the very inode number the open store last read
/// (file systems such as ext4 hand a freed inode number to the next new file): the store's
/// shortcut for a file it knows (same inode: read only what was appended) must not adopt it.
extension TPMCustodyAnchorTests {
    @Test func aStoreRefusesThePreMoveCopyPutBackOnTheInodeItKnew() async throws {
        try await offThePool { [self] in
            try fileVault(counter: true) { setup, early, preMove in
                var known = stat()
                #expect(stat(early.url.path, &known) == 0)
                try moveToTPMThroughAnotherStore(early, setup)
                // New files until one gets the inode number the early store read (freed by the
                // move's rewrite); a file system that never reuses one (tmpfs) has nothing to test.
                let directory = early.url.deletingLastPathComponent()
                var reused: URL?
                for attempt in 0..<256 where reused == nil {
                    let candidate = directory.appendingPathComponent("candidate-\(attempt)")
                    #expect(FileManager.default.createFile(atPath: candidate.path, contents: nil))
                    var info = stat()
                    if stat(candidate.path, &info) == 0, info.st_ino == known.st_ino { reused = candidate }
                }
                guard let reused else { return }
                try preMove.vault.write(to: reused)  // in place: the inode stays
                chmod(reused.path, 0o600)
                try preMove.putBack(at: early.url)  // the counter files of then, and a first copy
                #expect(rename(reused.path, early.url.path) == 0)
                expectRefusesReadsAndWrites(early)
            }
        }
    }
}

/// An open races other processes: it reads the file, derives the key, then asks the counters.
/// A move to TPM custody that finished in between is not a rollback: the open reads the file
/// again and opens the moved vault.
extension TPMCustodyAnchorTests {
    @Test func anOpenThatReadTheFileBeforeAnotherProcessMovedItOpensTheMovedVault() async throws {
        try await offThePool { [self] in
            try fileVault(counter: false) { setup, store, _ in
                let readBeforeTheMove = try LockedVault(url: store.url)
                try store.changeCustody(to: .tpm, secret: setup.secret)
                let opened = try readBeforeTheMove.unlock(with: setup.secret, configuration: setup.configuration)
                #expect(opened.custody == .tpm)
                #expect(try opened.load(before) == Data("before the move".utf8))
            }
        }
    }
}

/// `retire` refuses a copy older than its counter and removes nothing: the same for a copy from
/// before the move to TPM custody, whose counter at the TPM (found from the id alone) would
/// otherwise be left behind for good, with nothing left to release it.
extension TPMCustodyAnchorTests {
    @Test func retiringACopyFromBeforeTheMoveIsRefusedAndLeavesNoOrphanCounter() async throws {
        try await offThePool { [self] in
            try fileVault(counter: false) { setup, store, preMove in
                try store.changeCustody(to: .tpm, secret: setup.secret)
                let vaultID = try LockedVault(url: store.url).header.vaultID
                try preMove.putBack(at: store.url)
                #expect { try SealedFileStore.retire(at: store.url, secret: setup.secret, configuration: setup.configuration) } throws: {
                    self.isAnchorRefusal($0)
                }
                #expect(FileManager.default.fileExists(atPath: store.url.path))
                // Accepted on purpose, it retires cleanly: nothing of it is left at the TPM.
                _ = try SealedFileStore.acceptRestore(at: store.url, secret: setup.secret, configuration: setup.configuration)
                try SealedFileStore.retire(at: store.url, secret: setup.secret, configuration: setup.configuration)
                #expect(try custodian(setup).anchoredCounter(vaultID: vaultID) == nil)
            }
        }
    }
}
