import CredentialVault
import CredentialVaultSecretService
import Foundation
import CredentialVaultTestSupport
import Testing

/// Durations past what a store can represent are bounded or refused, never a trap: a huge
/// timeout ("practically none") is bounded to a year by `Deadline`, a time to live over a year
/// is `invalidArgument` on every backend. The traps are checked in a process of their own.
@Suite(.ownThread) struct DurationBoundTests {
    @Test func aHugeTimeoutDoesNotTrap() async {
        await #expect(processExitsWith: .success) {
            let store = SecretServiceStore(configuration: SecretServiceConfiguration(timeout: .seconds(10_000_000_000)))
            _ = try? store.status()
        }
    }

    /// It used to reach `ExpiryStamp.encode` and trap there.
    @Test func aHugeEphemeralTTLDoesNotTrap() async {
        await #expect(processExitsWith: .success) {
            let store = SecretServiceStore(configuration: SecretServiceConfiguration(timeout: .milliseconds(200)))
            _ = try? store.save(Data("x".utf8), for: CredentialKey(service: "s", account: "a"), options: .ephemeral(ttl: .seconds(Int64.max)))
        }
    }

    @Test func aTTLOverAYearIsRefusedAsAnInvalidArgument() {
        for ttl in [Duration.seconds(Int64.max), Lifetime.longestEphemeralTTL + .seconds(1)] {
            #expect {
                try StorageOptions.ephemeral(ttl: ttl).validate()
            } throws: { error in
                guard case .invalidArgument = error as? CredentialVaultError else { return false }
                return true
            }
        }
        #expect(throws: Never.self) { try StorageOptions.ephemeral(ttl: Lifetime.longestEphemeralTTL).validate() }
    }
}
