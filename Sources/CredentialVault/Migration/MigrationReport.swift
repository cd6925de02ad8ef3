/// What a `CredentialMigrator` run did. Names only, never values.
public struct MigrationReport: Sendable, Hashable, CustomStringConvertible {
    /// Copied to the target, verified by reading them back, then deleted from the source.
    public var migrated: [CredentialKey] = []
    /// Device-only credentials left in the source because the target would take them off
    /// this machine (see `CredentialMigrator.targetLeavesThisMachine`).
    public var skippedDeviceOnly: [CredentialKey] = []
    /// Left in the source because the target already holds a different value under the same
    /// key (run again with `overwrite` to replace it).
    public var conflicts: [CredentialKey] = []
    /// Listed by the source but gone (deleted, or expired) before they could be copied.
    public var vanished: [CredentialKey] = []

    /// An empty report.
    public init() {}

    /// Whether every credential the source listed has left it (nothing skipped or in conflict).
    public var isComplete: Bool { skippedDeviceOnly.isEmpty && conflicts.isEmpty }

    /// One line of counts, for example `migrated 3, skipped 1 device-only, 0 conflicts, 0 vanished`.
    public var description: String {
        "migrated \(migrated.count), skipped \(skippedDeviceOnly.count) device-only, "
            + "\(conflicts.count) conflict\(conflicts.count == 1 ? "" : "s"), \(vanished.count) vanished"
    }
}

/// What happened to one credential during a migration (for progress output).
public enum MigrationEvent: Sendable, Hashable {
    /// Copied, verified and deleted from the source.
    case migrated(CredentialKey)
    /// Left in the source: device-only, and the target would take it off this machine.
    case skippedDeviceOnly(CredentialKey)
    /// Left in the source: the target holds a different value.
    case conflict(CredentialKey)
    /// Listed, but gone before it could be copied.
    case vanished(CredentialKey)
}
