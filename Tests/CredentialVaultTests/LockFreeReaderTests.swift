import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// Readers never wait on a writer's lock: with an expired ephemeral record in the vault, opening
/// it and reading other keys (or the expired one) purge it only if the lock is free at once;
/// while another process holds the lock they answer, and the holder still holds it when they do
/// (a reader that waited would wait for the holder, or end with `busy`).
@Suite(.ownThread) final class LockFreeReaderTests {
    let dir = TempDirectory()
    let other = CredentialKey(service: "s", account: "other")
    let verifier = CredentialKey(service: "s", account: "verifier")

    /// A process holding the vault's lock (a raw flock), until the test ends.
    private func holdLock(_ url: URL) throws -> HelperProcess {
        let holder = try HelperProcess(["hold-lock", url.path, "300"], environment: [:])
        try holder.waitForLine(startingWith: "locked")
        return holder
    }

    @Test func loadAndListAnswerAtOnceWhileAnotherProcessHoldsTheLock() throws {
        let clock = ManualClock()
        let store = try TestVault.create(dir, clock: clock)
        try store.save(Data("v".utf8), for: other, options: .portable)
        try store.save(Data("pkce".utf8), for: verifier, options: .ephemeral(ttl: .seconds(30)))
        clock.advance(by: .seconds(31))
        let holder = try holdLock(store.url)
        defer { holder.kill() }

        let configuration = TestVault.configuration(dir, clock: clock)
        let url = store.url
        let (other, verifier) = (other, verifier)
        let answers = withinDeadline(.seconds(120), "reads while another process holds the lock") {
            Result { () throws(CredentialVaultError) -> (Data?, [CredentialKey], CredentialVaultError?) in
                let reader = try SealedFileStore.open(at: url, secret: .passphrase(TestVault.passphrase), configuration: configuration)
                var expired: CredentialVaultError?
                do throws(CredentialVaultError) { _ = try reader.load(verifier) } catch { expired = error }
                return (try reader.load(other), try reader.listKeys(service: "s"), expired)
            }
        }
        let (loaded, listed, expired) = try #require(answers).get()
        #expect(holder.process.isRunning, "the reads answered while the lock was held")
        #expect(loaded == Data("v".utf8))
        #expect(listed == [other])
        #expect(expired == .expired)
        // The purge happens once the lock is free.
        holder.kill()
        _ = try SealedFileStore.open(at: store.url, secret: .passphrase(TestVault.passphrase), configuration: TestVault.configuration(dir, clock: clock))
        #expect(try TestVault.storedRecordCount(store, clock: clock) == 1)
    }

    /// The same through the command line: `credvault lookup` of another key answers while the
    /// lock is held.
    @Test func theCLILookupAnswersWhileAnotherProcessHoldsTheLock() throws {
        let vault = dir.path("vaults/v.cvault").path
        let keyFile = dir.path("k.key").path
        let environment = ["HOME": dir.url.path, "XDG_DATA_HOME": dir.path("data").path, "XDG_STATE_HOME": dir.path("state").path]
        func credvault(_ arguments: [String], stdin: Data = Data()) throws -> CLIChild.Outcome {
            try CLIChild.run(arguments, environment: environment.merging(Sanitizers.options) { $1 }, stdin: stdin)
        }
        #expect(try credvault(["keygen", keyFile]).status == 0)
        let unlock = ["--vault", vault, "--key-file", keyFile]
        #expect(try credvault(["store", "s", "other", "--portable"] + unlock, stdin: Data("v".utf8)).status == 0)
        #expect(try credvault(["store", "s", "verifier", "--ttl", "1"] + unlock, stdin: Data("pkce".utf8)).status == 0)
        // A real-clock TTL: waiting at least that long is enough, however busy the machine.
        Thread.sleep(forTimeInterval: 1.2)
        let holder = try holdLock(URL(fileURLWithPath: vault))
        defer { holder.kill() }
        // The lock waits of credvault end with `busy` after 10 s; the holder keeps it 300 s.
        let found = try credvault(["lookup", "s", "other"] + unlock)
        #expect(found.status == 0 && found.stdout == Data("v".utf8))
        #expect(holder.process.isRunning, "credvault lookup answered while the lock was held")
    }
}
