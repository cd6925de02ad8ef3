#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `TokenStorageAdapter` conformance: reads answer from the directory, writes throw
/// `unsupported` after their arguments are checked.
extension SystemdCredentialStore: TokenStorageAdapter {
    /// Kept by the service manager (credentials outlive the process while the unit runs), read
    /// by any process of the unit; no accessibility or lifetime can be chosen (nothing is saved).
    public var capabilities: BackendCapabilities {
        BackendCapabilities(isPersistent: true, supportsDeviceOnly: false, supportsPortable: false, supportsEphemeral: false, isCrossProcessSafe: true)
    }

    /// The naming's service: the string conveniences read credentials by their systemd name.
    public var defaultService: String { naming.service }

    /// Throws `invalidArgument` for a bad key or options, else `unsupported`: read-only.
    public func save(_ value: Data, for key: CredentialKey, options: StorageOptions) throws(CredentialVaultError) {
        try key.validate()
        try options.validate()
        throw Self.readOnly("save")
    }

    /// The credential's value, `nil` when the unit has no such credential.
    public func load(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try key.validate()
        guard let name = naming.credentialName(of: key) else { return nil }
        return try read(name)
    }

    /// Throws `unsupported` (a take deletes): read-only.
    public func take(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        try key.validate()
        throw Self.readOnly("take")
    }

    /// Throws `unsupported`: read-only.
    @discardableResult
    public func delete(_ key: CredentialKey) throws(CredentialVaultError) -> Bool {
        try key.validate()
        throw Self.readOnly("delete")
    }

    /// The keys of the unit's credentials (of `service`, when given), sorted by service then account.
    public func listKeys(service: String?) throws(CredentialVaultError) -> [CredentialKey] {
        // Only the files their keys lead back to: one entry a key, even where `names` maps two
        // files to one key or claims another file's default key.
        try credentialNames().filter { naming.credentialName(of: naming.key(of: $0)) == $0 }.map(naming.key(of:))
            .filter { $0.isIn(service: service) }.sorted(by: CredentialKey.storageOrder)
    }

    /// Device-only, persistent, with the file's modification time (when systemd wrote it) as
    /// `modified`; `created` is unknown. Nothing is read.
    public func metadata(for key: CredentialKey) throws(CredentialVaultError) -> CredentialMetadata? {
        try key.validate()
        guard let name = naming.credentialName(of: key), let info = try inspect(name) else { return nil }
        let modified = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
        return CredentialMetadata(key: naming.key(of: name), accessibility: .deviceOnly, isEphemeral: false, modified: modified)
    }

    /// Throws `unsupported`: read-only.
    @discardableResult
    public func deleteAll(service: String?) throws(CredentialVaultError) -> Int {
        throw Self.readOnly("delete all")
    }
}
