import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultSecretService

/// The pipe the portal writes into, read without the portal: its waits under any deadline.
@Suite(.ownThread)
struct PortalPipeTests {
    /// A read timeout meant as "no limit" (`.seconds(Int64.max)`) waits, in slices, until
    /// cancelled: no arithmetic on it overflows (a crash).
    @Test func aReadTimeoutWithoutLimitWaitsUntilCancelledWithoutOverflow() throws {
        let pipe = try PortalPipe()
        // Our own write end stays open and nothing is written: the read has to wait.
        var polls = 0
        #expect(throws: CredentialVaultError.cancelled) {
            try pipe.readSecret(until: .now + .seconds(Int64.max)) {
                polls += 1
                return polls > 2
            }
        }
    }
}
