import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// SIGKILL between each step of a save with a rollback counter: before the counter
/// is read, after the state is durable but before the increment, and after the increment. After
/// every kill the vault opens (never `rolledBack`), holds every acknowledged save (the one
/// killed after its durable write too), takes the next save, and still refuses a copy from
/// before. Random moments inside the file write are `CrashConsistencyTests`' (the same write).
@Suite(.ownThread, .serialized) final class RollbackCrashTests {
    let dir = TempDirectory()

    private var configuration: SealedFileConfiguration {
        var configuration = TestVault.configuration(dir)
        configuration.rollbackCounter = true
        return configuration
    }

    @Test(arguments: ["before-read", "before-increment", "after-increment"], [1, 4])
    func aKillBetweenStepsLosesNothingAndKeepsTheGuard(point: String, saveNumber: Int) throws {
        let keyFile = try TestVault.keyFile(dir, name: "key-\(point)-\(saveNumber)")
        let url = dir.path("vault-\(point)-\(saveNumber)/v.cvault")
        let store = try SealedFileStore.create(at: url, secret: .keyFile(keyFile), kdf: TestVault.kdf, configuration: configuration)
        try store.save(Data("first".utf8), for: CredentialKey(service: "s", account: "first"), options: .portable)
        let older = try Data(contentsOf: url)
        try store.save(Data("second".utf8), for: CredentialKey(service: "s", account: "second"), options: .portable)

        let helper = try HelperProcess(
            ["rollback-crash-writer", url.path, keyFile.path, point, String(saveNumber)], environment: HelperProcess.environment(dir))
        let status = helper.waitForExit()
        #expect(status == SIGKILL, "the helper was killed at \(point) (status \(status))")
        let acked = helper.lastNumber(after: "ack")
        #expect(acked == saveNumber - 2, "saves before the killed one were acknowledged")

        let reopened = try SealedFileStore.open(at: url, secret: .keyFile(keyFile), configuration: configuration)
        let keys = Set(try reopened.listKeys(service: "rollback").map(\.account))
        let durable = point == "before-read" ? saveNumber - 1 : saveNumber
        #expect(keys == Set((0..<durable).map { "k\($0)" }), "exactly the durable saves at \(point)")
        try reopened.save(Data("after".utf8), for: CredentialKey(service: "s", account: "after"), options: .portable)
        let again = try SealedFileStore.open(at: url, secret: .keyFile(keyFile), configuration: configuration)
        #expect(try again.load(CredentialKey(service: "s", account: "after")) == Data("after".utf8))

        try older.write(to: url)
        expectThrows(\CredentialVaultError.isRolledBack) {
            _ = try SealedFileStore.open(at: url, secret: .keyFile(keyFile), configuration: self.configuration)
        }
    }
}
