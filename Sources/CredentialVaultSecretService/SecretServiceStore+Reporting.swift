import CredentialVault
import Logging

/// What the store tells its configuration's logger and metrics (docs/API.md, "Logging" and
/// "Metrics"): the error's kind and the provider, never a name, a value or an item's path.
extension SecretServiceStore {
    private static let metadata: Logger.Metadata = ["category": "secret-service"]

    /// An operation ended with `error`: the ones an operator must hear of are reported.
    func report(_ error: CredentialVaultError) {
        let logger = configuration.logger
        switch error {
        case .timedOut:
            configuration.metrics.timedOut(.secretService, operation: "call")
            logger.warning("the Secret Service did not answer within \(configuration.timeout) (timedOut)", metadata: Self.metadata)
        case .locked:
            logger.info("the keyring's collection is locked: refused (locked); unlock it, or allow interaction", metadata: Self.metadata)
        case .interactionRequired:
            logger.info("the Secret Service asks a person to answer a prompt: refused (interactionRequired)", metadata: Self.metadata)
        default:
            break
        }
    }

    /// A connection to the Secret Service was made (the first operation, or after it was lost).
    func reportConnected(_ service: ServiceHandle) {
        configuration.logger.info(
            "connected to the Secret Service: provider \(service.provider)", metadata: Self.metadata.merging(["provider": "\(service.provider)"]) { $1 })
    }

    /// The operation runs again, within its deadline, after `rerun` (a provider's quirk).
    func reportRerun(_ rerun: ServiceCall.Rerun) {
        let why =
            switch rerun {
            case .staleAlias: "a remembered collection alias named a collection that is gone"
            case .unlocked: "something locked was unlocked meanwhile"
            case .newSession: "the provider's session key could not be used (a new session is made)"
            }
        configuration.logger.debug("running the operation again: \(why)", metadata: Self.metadata)
    }
}

extension ServiceCall {
    /// Runs an unlock prompt (`body`) and reports it: shown, and how it ended.
    func reportingPrompt(
        for purpose: PromptPurpose, _ body: () throws(CredentialVaultError) -> OpaquePointer?
    ) throws(CredentialVaultError) -> OpaquePointer? {
        let what = purpose == .unlockCollection ? "collection" : "item_access"
        let metadata: Logger.Metadata = ["category": "secret-service", "provider": "\(service.provider)"]
        policy.logger.info("\(service.provider) shows a prompt \(purpose.asking)", metadata: metadata)
        let result: OpaquePointer?
        do {
            result = try body()
        } catch {
            let outcome = error == .timedOut ? "timed_out" : error == .cancelled ? "cancelled" : "failed"
            policy.metrics.unlockPrompt(purpose: what, outcome: outcome)
            policy.logger.info("the prompt \(purpose.asking) ended without an answer (\(error.kind))", metadata: metadata)
            throw error
        }
        let outcome = result == nil ? "dismissed" : "answered"
        policy.metrics.unlockPrompt(purpose: what, outcome: outcome)
        policy.logger.info("the prompt \(purpose.asking) was \(outcome)", metadata: metadata)
        return result
    }
}
