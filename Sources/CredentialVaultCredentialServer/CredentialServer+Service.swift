#if ServiceLifecycle
import CredentialVault
import ServiceLifecycle

/// A credential server as a swift-service-lifecycle `Service` (trait `ServiceLifecycle`): in the
/// application's `ServiceGroup`, it serves until the group shuts down gracefully (SIGTERM, say),
/// then stops accepting, finishes the clients being answered, removes its socket and returns;
/// cancelled, it drops them and returns at once (the socket removed all the same).
extension CredentialServer: Service {
    /// Serves until graceful shutdown or cancellation (see the extension). Throws what
    /// `run(until:)` throws.
    public func run() async throws(CredentialVaultError) {
        let stop = try Stop()
        // The operation keeps the error as a value: the handler's function rethrows untyped.
        let failure: CredentialVaultError? = await withGracefulShutdownHandler {
            do throws(CredentialVaultError) {
                try await run(until: stop)
                return nil
            } catch {
                return error
            }
        } onGracefulShutdown: {
            stop.stopGracefully()
        }
        if let failure { throw failure }
    }
}
#endif
