import CredentialVault

/// Which backend was chosen, and why (for `credvault info` and logs).
public struct BackendDecision: Sendable, Hashable, CustomStringConvertible {
    /// The backend.
    public var kind: BackendKind
    /// Why it was chosen, in words, for example "the Secret Service is not available (...):
    /// using the sealed file with the device key".
    public var reason: String
    /// The Secret Service's state when it was asked (automatic choice), else `nil`.
    public var secretServiceStatus: SecretServiceStatus?
    /// The custody a new sealed file gets when the decision says (inside a sandbox: `.portal`);
    /// `nil`: the sealed file's configuration decides.
    public var custody: DeviceCustody?
    /// For `.libsecretFile`: which file and where its key comes from; else `nil`.
    public var libsecretFile: LibsecretFileTarget?

    /// Creates a decision.
    public init(
        kind: BackendKind, reason: String, secretServiceStatus: SecretServiceStatus? = nil, custody: DeviceCustody? = nil,
        libsecretFile: LibsecretFileTarget? = nil
    ) {
        self.kind = kind
        self.reason = reason
        self.secretServiceStatus = secretServiceStatus
        self.custody = custody
        self.libsecretFile = libsecretFile
    }

    /// Whether the automatic choice found the Secret Service with its default collection
    /// locked and kept it (`LockedKeyringPolicy.reportLocked`, or a wait for unlock that timed
    /// out): `BackendResolver.open` then throws `locked`. `false` for an explicit choice.
    public var isKeyringLocked: Bool { kind == .secretService && secretServiceStatus?.isLocked == true }

    /// `<kind> (<reason>)`.
    public var description: String { "\(kind) (\(reason))" }
}

/// An opened store and the decision that picked it.
public struct BackendSelection: Sendable {
    /// Which backend, and why.
    public var decision: BackendDecision
    /// The opened store, through both protocols (`try await store.load(key)` from async code).
    public var store: any TokenStorageBackend

    /// Creates a selection.
    public init(decision: BackendDecision, store: any TokenStorageBackend) {
        self.decision = decision
        self.store = store
    }
}
