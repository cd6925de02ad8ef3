import Logging

extension SealedFileConfiguration {
    /// Logs a refusal an operator must hear of, whoever catches the error: the vault file
    /// failed its authentication (`tampered`), is damaged (`corrupted`), or is an older copy
    /// (`rolledBack`). Other errors are the caller's to report. Counted in `metrics` too.
    func logRefusal(_ error: CredentialVaultError, vault path: String) {
        metrics.refused(error, backend: .file)
        let metadata: Logger.Metadata = ["vault": .string(path)]
        switch error {
        case .tampered:
            logger.warning("the vault file failed its authentication (changed without the key, or damaged): refused", metadata: metadata)
        case .corrupted(let why):
            logger.warning("the vault file is damaged (\(why)): refused", metadata: metadata)
        case .rolledBack(let why):
            logger.warning("an older copy of the vault was refused: \(why)", metadata: metadata)
        default:
            break
        }
    }
}
