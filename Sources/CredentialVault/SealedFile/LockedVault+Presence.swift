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

extension LockedVault {
    /// The custody the header of the vault at `url` names, read from its first bytes only
    /// (through the same checked directory and file opening as every read); `nil` when there is
    /// no vault there that can be read. For choosing an executable or custodian before opening;
    /// `unlock` checks everything again.
    public static func custody(at url: URL) -> DeviceCustody? {
        guard let directory = try? PrivateDirectory.open(url.deletingLastPathComponent().path, owners: .notWritableByOthers),
            let file = try? InPlaceFile(FileLocation(url.lastPathComponent, in: directory), writable: false),
            let bytes = try? file.read(at: 0, count: VaultHeader.size), let header = try? VaultHeader.decode(bytes: bytes)
        else { return nil }
        return header.custody
    }
}
