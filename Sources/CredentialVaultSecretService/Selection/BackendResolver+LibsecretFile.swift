import CredentialVault

/// libsecret's keyring file as a backend (`.libsecretFile`): the file and key libsecret's own
/// file backend would use (secret-file-backend.c): `$SECRET_FILE_TEST_PATH`, else
/// `$XDG_DATA_HOME/keyrings/default.keyring`; a password when one is given (libsecret's
/// `SECRET_FILE_TEST_PASSWORD` comes first there too), else inside a sandbox the Secret
/// portal's 64 bytes. Outside a sandbox without a password there is no key to use: libsecret
/// then uses a TPM of its own build or fails, and this resolver refuses (`notAvailable`).
extension BackendResolver {
    /// The variable libsecret reads its keyring file's path from (tests and tools set it).
    static let libsecretFilePathVariable = "SECRET_FILE_TEST_PATH"

    /// The file and key origin `.libsecretFile` uses here; `nil` outside a sandbox without a
    /// password.
    func libsecretFileTarget() -> LibsecretFileTarget? {
        let key: LibsecretFileTarget.KeyOrigin
        if libsecretFilePassword != nil {
            key = .password
        } else if sandbox != nil {
            key = .portal
        } else {
            return nil
        }
        return LibsecretFileTarget(path: libsecretFileLocation, key: key)
    }

    /// The decision for an explicit `.libsecretFile` (or `CREDVAULT_BACKEND=libsecret-file`).
    /// Throws `notAvailable` outside a sandbox without `libsecretFilePassword`.
    func libsecretFileDecision(reason: String) throws(CredentialVaultError) -> BackendDecision {
        guard let target = libsecretFileTarget() else {
            throw .notAvailable(
                "libsecret's keyring file outside a Flatpak or Snap sandbox needs its password (libsecretFilePassword): "
                    + "only a sandboxed app gets a key from the Secret portal")
        }
        return BackendDecision(kind: .libsecretFile, reason: reason, libsecretFile: target)
    }

    /// `libsecretFilePath`, else libsecret's own choice of path.
    var libsecretFileLocation: String {
        if let libsecretFilePath { return libsecretFilePath }
        if let path = environment[Self.libsecretFilePathVariable], !path.isEmpty { return path }
        return LibsecretFileConfiguration.defaultPath
    }

    /// The store `decision` names, its key source read now: the password given, or the
    /// portal's secret (blocking, within `portal`'s deadlines).
    @available(*, noasync, message: "blocks the calling thread: from async code, await the async overload")
    func libsecretFileStore(for decision: BackendDecision) throws(CredentialVaultError) -> LibsecretFileStore {
        let target = try libsecretFileTarget(of: decision)
        let keySource: LibsecretKeySource
        switch target.key {
        case .password: keySource = try .password(password())
        case .portal: keySource = .portalSecret(try portal.retrieveSecret())
        }
        return try libsecretFileStore(at: target.path, keySource: keySource)
    }

    /// `libsecretFileStore(for:)` without blocking the caller (the portal's async call).
    func libsecretFileStore(for decision: BackendDecision) async throws(CredentialVaultError) -> LibsecretFileStore {
        let target = try libsecretFileTarget(of: decision)
        let keySource: LibsecretKeySource
        switch target.key {
        case .password: keySource = try .password(password())
        case .portal: keySource = .portalSecret(try await portal.retrieveSecret())
        }
        return try libsecretFileStore(at: target.path, keySource: keySource)
    }

    private func libsecretFileTarget(of decision: BackendDecision) throws(CredentialVaultError) -> LibsecretFileTarget {
        // Every `.libsecretFile` decision `decide` makes names its file.
        guard let target = decision.libsecretFile else { throw .invalidArgument("the decision names no libsecret keyring file") }
        return target
    }

    private func password() throws(CredentialVaultError) -> SecureBytes {
        guard let libsecretFilePassword else { throw .invalidArgument("no password was given for libsecret's keyring file") }
        return libsecretFilePassword
    }

    private func libsecretFileStore(at path: String, keySource: LibsecretKeySource) throws(CredentialVaultError) -> LibsecretFileStore {
        let configuration = LibsecretFileConfiguration(
            path: path, keySource: keySource, application: application, defaultService: defaultService, clock: secretService.clock)
        return try LibsecretFileStore(configuration: configuration)
    }
}
