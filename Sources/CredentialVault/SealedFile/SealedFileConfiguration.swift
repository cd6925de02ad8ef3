import Foundation

/// Settings of a sealed-file vault that are not stored in the file.
public struct SealedFileConfiguration: Sendable {
    /// This machine's identity for device-only records and device-key unlock; `nil` means
    /// `DeviceIdentity.current()`, resolved on first use. Inject another one to play "another machine".
    public var device: DeviceIdentity?
    /// Decides ephemeral expiry.
    public var clock: any CredentialClock
    /// How long a write waits for another process's lock before throwing `busy`.
    public var lockTimeout: Duration
    /// The service used by the string conveniences.
    public var defaultService: String

    /// Creates a configuration (defaults: this machine, the system clock, a 10 s lock wait).
    public init(
        device: DeviceIdentity? = nil, clock: any CredentialClock = SystemClock(), lockTimeout: Duration = .seconds(10),
        defaultService: String = "credential-vault"
    ) {
        self.device = device
        self.clock = clock
        self.lockTimeout = lockTimeout
        self.defaultService = defaultService
    }

    func resolvedDevice() throws(CredentialVaultError) -> DeviceIdentity {
        if let device { return device }
        return try DeviceIdentity.current()
    }
}
