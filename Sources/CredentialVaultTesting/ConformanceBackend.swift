import CredentialVault
import Foundation

/// A backend under test: how to make a fresh, isolated store and (for persistent backends) how
/// to open the same store again as a new process would.
public struct ConformanceBackend: Sendable, CustomStringConvertible {
    /// The name shown in test results.
    public let name: String
    /// A fresh, empty store whose ephemeral expiry follows `clock`.
    public let makeStore: @Sendable (_ clock: ManualClock) throws -> StoreUnderTest
    /// Opens the same storage again (a new handle, as after a restart); `nil` for backends
    /// that are not persistent.
    public let reopen: (@Sendable (_ store: StoreUnderTest, _ clock: ManualClock) throws -> StoreUnderTest)?
    /// The names of the `ConformanceCheck.difficultNames` check that the
    /// backend cannot store exactly and must refuse, as a service and as an account, with
    /// `unsupported`, storing nothing and never repeating the name. Empty (the default): every
    /// name is stored exactly.
    public let refusedNames: Set<String>

    /// Describes a backend for the suite; `refusedNames` are the difficult names it refuses
    /// (none by default).
    public init(
        name: String,
        makeStore: @escaping @Sendable (_ clock: ManualClock) throws -> StoreUnderTest,
        reopen: (@Sendable (_ store: StoreUnderTest, _ clock: ManualClock) throws -> StoreUnderTest)?,
        refusedNames: Set<String> = []
    ) {
        self.name = name
        self.makeStore = makeStore
        self.reopen = reopen
        self.refusedNames = refusedNames
    }

    /// The backend's name.
    public var description: String { name }
}

/// A store handed to the suite: through the synchronous protocol, the asynchronous one, or
/// both (every backend of this package implements both; a third-party backend may implement
/// one), with whatever must stay alive as long as the store is used (a temporary directory).
public struct StoreUnderTest: Sendable {
    /// The store through `TokenStorageAdapter`, when it implements it.
    public let sync: (any TokenStorageAdapter)?
    /// The store through `AsyncTokenStorageAdapter`, when it implements it.
    public let async: (any AsyncTokenStorageAdapter)?
    /// Kept alive with the store (a temporary directory that is removed on deinit, ...).
    public let owner: (any Sendable)?

    /// A store implementing both protocols.
    public init<Store: TokenStorageAdapter & AsyncTokenStorageAdapter>(_ store: Store, owner: (any Sendable)? = nil) {
        sync = store
        async = store
        self.owner = owner
    }

    /// A store implementing the synchronous protocol only.
    public init(sync store: any TokenStorageAdapter, owner: (any Sendable)? = nil) {
        sync = store
        async = nil
        self.owner = owner
    }

    /// A store implementing the asynchronous protocol only.
    public init(async store: any AsyncTokenStorageAdapter, owner: (any Sendable)? = nil) {
        sync = nil
        async = store
        self.owner = owner
    }
}

/// Which of the two storage protocols a run of the suite goes through.
public enum ConformanceAPI: String, Sendable, CaseIterable, CustomStringConvertible {
    /// `TokenStorageAdapter`.
    case sync
    /// `AsyncTokenStorageAdapter`.
    case async

    /// The protocol's short name.
    public var description: String { rawValue }
}

/// Every check of the conformance suite; each backend's test target runs all of them.
public enum ConformanceCheck: String, CaseIterable, Sendable, CustomStringConvertible {
    case roundTripSizes, binaryValues, unicodeNames, overwrite, deleteMissing, listKeys, take, takeIsSingleUse
    case ephemeralExpiry, ephemeralNeverListed, deviceOnlyByDefault, portableMetadata, deleteAll
    case stringConveniences, invalidArguments, concurrentTasks, persistenceAcrossReopen
    case exactByteNames, difficultNames, keyQueries
    /// Through the async protocol: 32 concurrent saves and loads leave a heartbeat on the
    /// cooperative pool beating (never a gap of a second: a blocked pool stops it for seconds).
    case asyncDoesNotBlockThePool
    /// Through the async protocol: an operation whose task was cancelled before it ran either
    /// did its work or threw `cancelled` having done nothing.
    case cancelledBeforeItRan

    /// The check's name.
    public var description: String { rawValue }

    /// Whether the check stores an ephemeral credential along the way: on a backend whose
    /// capabilities say it has none, the check is that an ephemeral save is refused
    /// (`unsupported`) and stores nothing.
    public var needsEphemeral: Bool {
        switch self {
        case .take, .takeIsSingleUse, .ephemeralExpiry, .ephemeralNeverListed, .keyQueries, .persistenceAcrossReopen: true
        default: false
        }
    }
}
