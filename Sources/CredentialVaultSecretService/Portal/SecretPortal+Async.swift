import CredentialVault

extension SecretPortal {
    /// `version()` on a thread of its own (never Swift's cooperative pool); cancelling the task
    /// ends the call (`cancelled`).
    public func version() async throws(CredentialVaultError) -> UInt32 {
        try await StoreThreads.detached(name: "credvault-portal") { _ throws(CredentialVaultError) in try self.version() }
    }

    /// `retrieveSecret()` on a thread of its own (never Swift's cooperative pool); cancelling
    /// the task closes the portal's request (`Request.Close`) and throws `cancelled`.
    public func retrieveSecret() async throws(CredentialVaultError) -> SecureBytes {
        try await StoreThreads.detached(name: "credvault-portal") { _ throws(CredentialVaultError) in try self.retrieveSecret() }
    }
}
