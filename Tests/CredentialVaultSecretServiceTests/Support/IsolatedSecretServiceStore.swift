import CredentialVault
import CredentialVaultSecretService
import Foundation

/// A fresh `SecretServiceStore` that sees only its own credentials: its service names get a
/// unique prefix in the keyring. This is the factory to plug the backend into a shared
/// conformance suite: `IsolatedSecretServiceStore().store` is empty, and `cleanUp()` (or
/// deinit) deletes whatever the test left.
final class IsolatedSecretServiceStore {
    /// The prefix of this store's service names in the keyring.
    let prefix: String
    /// The store under test.
    let store: SecretServiceStore

    init(clock: any CredentialClock = SystemClock(), timeout: Duration = TestEnvironment.timeout) {
        prefix = "cvtest-\(UUID().uuidString.prefix(8))/"
        store = SecretServiceStore(
            configuration: SecretServiceConfiguration(timeout: timeout, serviceNamePrefix: prefix, clock: clock))
    }

    /// Deletes every credential of this store.
    func cleanUp() {
        _ = try? store.deleteAll()
    }

    deinit { cleanUp() }
}
