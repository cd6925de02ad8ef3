import CredentialVault
import Foundation

extension SecretServiceStore {
    /// The value of `key`, or, when it has none, `make()` stored under it (persistent) and
    /// returned: atomically among CredentialVault users, because the whole exchange holds the
    /// key's lock (`KeyLock`), so two processes making a value at once agree on one.
    func loadOrCreate(_ key: CredentialKey, make: () -> Data) throws(CredentialVaultError) -> Data {
        try key.validate()
        let now = configuration.clock.now()
        let attributes = naming.attributes(of: key, options: .portable, expiresAt: nil)
        return try perform(locking: key) { (call) throws(CredentialVaultError) -> Data in
            if let found = try unexpiredNewest(call, key, now: now) {
                if let value = try call.secrets([found.path])[found.path] { return value }
                // Found but not answered: never made anew over it (a device secret replaced loses
                // every credential sealed with the old one), even when it was deleted just now.
                try call.missingSecret(found.path, in: found.collection)
                throw .io("the Secret Service did not return the value of an item it listed; nothing was changed: retry")
            }
            guard let main = try call.collectionPath(.default) else { throw call.noDefaultCollection() }
            let value = make()
            _ = try call.searchAndReplace(naming.identity(of: key), in: main, attributes: attributes, label: key.displayLabel, value: value)
            return value
        }
    }
}
