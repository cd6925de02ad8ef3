import CredentialVault
import Foundation

/// A backend under test: how to make a fresh, isolated store and (for persistent backends) how
/// to open the same store again as a new process would.
public struct ConformanceBackend: Sendable, CustomStringConvertible {
    /// The name shown in test results.
    public let name: String
    /// A fresh, empty store whose ephemeral expiry follows `clock`.
    public let makeStore: @Sendable (_ clock: ManualClock) throws -> any TokenStorageAdapter
    /// Opens the same storage again (a new handle, as after a restart); `nil` for backends
    /// that are not persistent.
    public let reopen: (@Sendable (_ store: any TokenStorageAdapter, _ clock: ManualClock) throws -> any TokenStorageAdapter)?

    /// Describes a backend for the suite.
    public init(
        name: String,
        makeStore: @escaping @Sendable (_ clock: ManualClock) throws -> any TokenStorageAdapter,
        reopen: (@Sendable (_ store: any TokenStorageAdapter, _ clock: ManualClock) throws -> any TokenStorageAdapter)?
    ) {
        self.name = name
        self.makeStore = makeStore
        self.reopen = reopen
    }

    /// The backend's name.
    public var description: String { name }
}

/// Every check of the conformance suite; each backend's test target runs all of them.
public enum ConformanceCheck: String, CaseIterable, Sendable, CustomStringConvertible {
    case roundTripSizes, binaryValues, unicodeNames, overwrite, deleteMissing, listKeys, take, takeIsSingleUse
    case ephemeralExpiry, ephemeralNeverListed, deviceOnlyByDefault, portableMetadata, deleteAll
    case stringConveniences, invalidArguments, concurrentTasks, persistenceAcrossReopen
    case exactByteNames, controlCharactersRefused

    /// The check's name.
    public var description: String { rawValue }
}
