#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension LockedVault {
    /// Reads the vault at `url` like `init(url:)`, or `nil` when there is no file there (nor its
    /// directory). Every other refusal is thrown: a symbolic link, a second hard link, loose
    /// permissions, something that is not a vault are never "no vault yet", so no caller mistakes
    /// them for a place to create a new one.
    public static func ifPresent(at url: URL) throws(CredentialVaultError) -> LockedVault? {
        do {
            return try LockedVault(url: url)
        } catch .notAvailable {
            return nil
        }
    }
}
