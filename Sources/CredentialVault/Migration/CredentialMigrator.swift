import CSodium
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Moves credentials from one backend to another without ever losing one.
///
/// For each persistent credential of the source, in order: read it and its metadata, store it
/// in the target with the same accessibility and label, read it back from the target and check
/// value and accessibility, and only then delete it from the source. Interrupted at any point
/// (killed, power cut), every credential is in the source, in the target, or in both with the
/// same value; running the migration again completes it (a copy that is already in the target
/// with the same value is simply verified and removed from the source).
///
/// Not migrated: ephemeral credentials (they belong to one authorization round trip on this
/// machine and are never listed), and device-only credentials when the target would take them
/// off this machine (`targetLeavesThisMachine`, or a target without device-only support); they
/// stay in the source and the report names them. A target that already holds a different value
/// under a key is left alone unless `overwrite` is set, and the credential stays in the source.
public struct CredentialMigrator: Sendable {
    /// Where the credentials are.
    public let source: any AsyncTokenStorageAdapter
    /// Where they go.
    public let target: any AsyncTokenStorageAdapter
    /// Set when the target's storage is meant for another machine (a vault file to be copied
    /// elsewhere, a synced location): device-only credentials then stay in the source.
    /// Targets without device-only support are treated the same way, always.
    public var targetLeavesThisMachine: Bool
    /// Replace a different value the target already holds under the same key.
    public var overwrite: Bool

    /// Creates a migrator from `source` to `target`.
    public init(from source: any AsyncTokenStorageAdapter, to target: any AsyncTokenStorageAdapter,
                targetLeavesThisMachine: Bool = false, overwrite: Bool = false) {
        self.source = source
        self.target = target
        self.targetLeavesThisMachine = targetLeavesThisMachine
        self.overwrite = overwrite
    }

    /// Migrates every persistent credential of the source (of one service when given).
    /// `progress` is called after each credential; `counted` with the credentials handled so
    /// far and the number listed, once before the first (0) and after each (for a progress
    /// line). Throws the first error of either backend, or `cancelled` between two credentials
    /// when the task is cancelled; what was done until then is durable, and a rerun continues
    /// from there.
    public func migrate(
        service: String? = nil, progress: (MigrationEvent) -> Void = { _ in },
        counted: (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) async throws(CredentialVaultError) -> MigrationReport {
        var report = MigrationReport()
        let keepsDeviceOnly = target.capabilities.supportsDeviceOnly && !targetLeavesThisMachine
        let keys = try await source.listKeys(service: service)
        counted(0, keys.count)
        for (index, key) in keys.enumerated() {
            // Between two credentials, so that a cancelled migration stops even with stores
            // that answer from memory (and never notice the cancellation themselves).
            if Task.isCancelled { throw .cancelled }
            let event = try await migrate(key, keepsDeviceOnly: keepsDeviceOnly)
            switch event {
            case .migrated(let key): report.migrated.append(key)
            case .skippedDeviceOnly(let key): report.skippedDeviceOnly.append(key)
            case .conflict(let key): report.conflicts.append(key)
            case .vanished(let key): report.vanished.append(key)
            }
            progress(event)
            counted(index + 1, keys.count)
        }
        return report
    }

    private func migrate(_ key: CredentialKey, keepsDeviceOnly: Bool) async throws(CredentialVaultError) -> MigrationEvent {
        guard let metadata = try await source.metadata(for: key), !metadata.isEphemeral else { return .vanished(key) }
        if metadata.accessibility == .deviceOnly && !keepsDeviceOnly { return .skippedDeviceOnly(key) }
        let fullKey = metadata.key  // with the source's label
        guard var value = try await source.load(key) else { return .vanished(key) }
        defer { wipe(&value) }

        let options = StorageOptions(accessibility: metadata.accessibility)
        if var existing = try await target.load(key) {
            let same = existing == value
            wipe(&existing)
            if !same {
                guard overwrite else { return .conflict(key) }
                try await target.save(value, for: fullKey, options: options)
            } else if try await target.metadata(for: key)?.accessibility != metadata.accessibility {
                try await target.save(value, for: fullKey, options: options)
            }
        } else {
            try await target.save(value, for: fullKey, options: options)
        }

        // Verify the copy before the original goes.
        guard var copy = try await target.load(key) else {
            throw .io("the target lost \(key) right after storing it; the source still has it")
        }
        let verified = copy == value
        wipe(&copy)
        guard verified, try await target.metadata(for: key)?.accessibility == metadata.accessibility else {
            throw .io("the copy of \(key) in the target does not read back the same; the source still has it")
        }
        _ = try await source.delete(key)
        return .migrated(fullKey)
    }
}

/// Overwrites a copy of a secret before it is dropped.
private func wipe(_ data: inout Data) {
    data.withUnsafeMutableBytes { buffer in
        if let base = buffer.baseAddress, buffer.count > 0 { sodium_memzero(base, buffer.count) }
    }
}
