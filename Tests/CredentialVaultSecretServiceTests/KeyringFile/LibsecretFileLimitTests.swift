import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultSecretService

/// What this store writes stays within what it reads back: the file's and each item's bounds.
@Suite(.ownThread) struct LibsecretFileLimitTests {
    /// Four credentials of the largest size would make a file over the 64 MiB a read accepts:
    /// the save that would cross it is refused, and every credential saved before still reads.
    @Test func aSaveThatWouldGrowTheFilePastWhatIsReadIsRefusedAndTheFileStaysReadable() throws {
        let file = SecretToolFile()
        let store = try file.store()
        let large = Data(repeating: 0x5A, count: KeyringFileLayout.maximumSecretSize)
        var saved: [CredentialKey] = []
        for account in ["a", "b", "c", "d"] {
            let key = CredentialKey(service: "large.example", account: account)
            do throws(CredentialVaultError) {
                try store.synchronous.save(large, for: key)
                saved.append(key)
            } catch {
                #expect(error.isInvalidArgument, "\(error)")
            }
        }
        #expect(saved.count < 4)
        #expect(try store.synchronous.listKeys() == saved)
        for key in saved { #expect(try store.synchronous.load(key) == large) }
    }
}
