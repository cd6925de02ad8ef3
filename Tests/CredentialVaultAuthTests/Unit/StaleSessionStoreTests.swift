import CredentialVault
import Foundation
import Testing

@testable import CredentialVaultAuth

/// A session manager whose store another process made stale (its vault's data key rotated):
/// the state says so with the store's own case, `.storeFailure(.reopenRequired(.keyChanged))`,
/// never `.storeLocked` (whose advice, unlock the keyring, would be wrong) and never "signed
/// out"; `reload()` cannot lift it (the manager keeps its store object), so the app makes a
/// new manager over a store opened again, which finds the session. Real vault, two store objects.
@Suite struct StaleSessionStoreTests {
    @Test func aStoreAnotherProcessRotatedIsAFailureToReopenNeverALockedStore() async throws {
        let vault = try TemporaryVault()
        let store = try vault.open()
        try await SessionManagerTests.seed(store, expiresIn: 3600)
        let manager = await SessionManager(refresher: ScriptedRefresher([]), store: store, key: SessionManagerTests.key)
        #expect(manager.state.session != nil)

        try await vault.open().rotateDataKey(secret: .passphrase(TemporaryVault.passphrase), kdf: .insecureTestingOnly)
        let stale = AuthState.unauthenticated(.storeFailure(.reopenRequired(.keyChanged)))
        #expect(await manager.reload() == stale)
        await #expect(throws: AuthError.storage(.reopenRequired(.keyChanged))) { _ = try await manager.storedSession() }
        #expect(await manager.reload() == stale, "the same store object stays stale")

        let renewed = await SessionManager(refresher: ScriptedRefresher([]), store: try vault.open(), key: SessionManagerTests.key)
        #expect(renewed.state.session != nil, "a manager over the store opened again finds the session")
    }
}
