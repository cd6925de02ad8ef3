import CredentialVault
import Foundation

/// Where a `LibsecretFileStore` finds libsecret's keyring file and the secret its key comes from.
public struct LibsecretFileConfiguration: Sendable {
    /// The keyring file: libsecret's `$XDG_DATA_HOME/keyrings/default.keyring` by default
    /// (`defaultPath`), which in a Flatpak is `~/.var/app/APPID/data/keyrings/default.keyring`.
    public var path: String
    /// The secret the file's key is derived from.
    public var keySource: LibsecretKeySource
    /// The application whose namespace the store works in, as `SecretServiceConfiguration.application`:
    /// the same attribute on the same items, so a credential reads the same in the keyring file
    /// and in the Secret Service.
    public var application: ApplicationIdentifier
    /// The service of the string conveniences: `application.defaultService` unless set.
    public var defaultService: String {
        get { explicitDefaultService ?? application.defaultService }
        set { explicitDefaultService = newValue }
    }
    private var explicitDefaultService: String?
    /// Put in front of every service name, as `SecretServiceConfiguration.serviceNamePrefix`.
    public var serviceNamePrefix: String
    /// How long an operation waits for another CredentialVault writer of the file (its lock)
    /// before it throws `busy`. Default 5 seconds.
    public var lockTimeout: Duration
    /// The source of "now" for ephemeral expiry and the items' times (a `ManualClock` in tests).
    public var clock: any CredentialClock

    /// Creates a configuration; `path` defaults to `defaultPath`.
    public init(
        path: String = LibsecretFileConfiguration.defaultPath, keySource: LibsecretKeySource, application: ApplicationIdentifier = .credvault,
        defaultService: String? = nil, serviceNamePrefix: String = "", lockTimeout: Duration = .seconds(5), clock: any CredentialClock = SystemClock()
    ) {
        self.path = path
        self.keySource = keySource
        self.application = application
        explicitDefaultService = defaultService
        self.serviceNamePrefix = serviceNamePrefix
        self.lockTimeout = lockTimeout
        self.clock = clock
    }

    /// libsecret's file: `keyrings/default.keyring` in `$XDG_DATA_HOME` (else `~/.local/share`).
    /// Inside a Flatpak, `$XDG_DATA_HOME` is the application's own `~/.var/app/APPID/data`.
    public static var defaultPath: String {
        XDGDirectories.data.appendingPathComponent("keyrings").appendingPathComponent("default.keyring").path
    }
}
