import CLibSecret
import CredentialVault
import Foundation

extension SecretServiceStore {
    /// Asks the Secret Service to unlock the default collection, which normally shows a
    /// password prompt on the user's display (none for a KWallet wallet that is open). Call it
    /// only when a person is there to answer; or set `SecretServiceConfiguration.allowsInteraction`,
    /// with which every operation unlocks what it needs this way.
    ///
    /// Returns at once when the collection is already unlocked. Throws `locked` when the
    /// prompt was dismissed or could not be shown (no display), `timedOut` after
    /// `configuration.interactiveUnlockTimeout`, `notAvailable` when there is no service or no
    /// default collection.
    ///
    /// Called through the async `unlockInteractively()`, cancelling the task dismisses the
    /// prompt and returns `cancelled` at once; the collection may still end up unlocked if the
    /// person answered the prompt just then.
    public func unlockInteractively() throws(CredentialVaultError) {
        var interactive = configuration
        interactive.allowsInteraction = true
        try SecretServiceStore(configuration: interactive).perform { (call) throws(CredentialVaultError) in
            guard let main = try call.collectionPath(.default) else { throw call.noDefaultCollection() }
            guard try call.isLocked(collection: main) else { return }
            try call.unlock([main], for: .unlockCollection)
            // Confirmed with a fresh look at the collection rather than trusting the prompt's answer.
            if try call.isLocked(collection: main) { throw .locked }
        }
    }
}
