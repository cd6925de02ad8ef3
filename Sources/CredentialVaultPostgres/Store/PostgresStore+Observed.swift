import CredentialVault
import Logging

extension PostgresStore {
    /// Runs the store operation `body` and tells the configuration's logger and metrics of
    /// the failures an operator must hear of, whoever catches them: data refused as tampered
    /// with, damaged or an older copy (`rolledBack`), and a deadline passed (`timedOut`).
    /// Only the error's kind is reported, never the credential the operation was about.
    func observed<T>(_ body: () throws(CredentialVaultError) -> T) throws(CredentialVaultError) -> T {
        do { return try body() } catch {
            report(error)
            throw error
        }
    }

    /// `body` on one of the store's threads (the async API), observed.
    func observedOnThread<T: Sendable>(
        _ body: @escaping @Sendable () throws(CredentialVaultError) -> T
    ) async throws(CredentialVaultError) -> T {
        try await threads.run { _ throws(CredentialVaultError) in try self.observed(body) }
    }

    /// See `observed(_:)`.
    func report(_ error: CredentialVaultError) { Self.report(error, configuration) }

    /// Tells `configuration`'s logger and metrics of `error` when an operator must hear of it
    /// (see `observed(_:)`); other errors are the caller's to report.
    static func report(_ error: CredentialVaultError, _ configuration: PostgresConfiguration) {
        let logger = configuration.logger
        switch error {
        case .tampered, .corrupted:
            configuration.metrics.refused(error, backend: .postgres)
            logger.warning("the fleet store's data failed its verification: refused (\(error))", metadata: ["category": "fleet"])
        case .rolledBack:
            configuration.metrics.refused(error, backend: .postgres)
            logger.warning("an older copy of the fleet store was refused: \(error)", metadata: ["category": "fleet"])
        case .timedOut:
            configuration.metrics.timedOut(.postgres, operation: "statement")
            logger.warning("the fleet store did not answer before its deadline (timedOut)", metadata: ["category": "fleet"])
        default:
            break
        }
    }
}
