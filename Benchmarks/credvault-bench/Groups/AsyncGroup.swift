import CredentialVault
import Foundation

/// Group 3b: the async API next to the sync one, in the same run, on an open sealed-file vault
/// (key file, device-only records, 128 B values) and on the in-memory store. A load from an
/// open vault is answered on the caller's thread (target: at most 1.5x the sync load); a save
/// waits for the lock without blocking and writes on the store's thread (target: at most 1.1x
/// the sync save, whose cost is the durable write).
enum AsyncGroup {
    static let title = "Async API beside the sync one (sealed file open with N items; in-memory store)"

    static func run(_ options: Options, _ reporter: Reporter, _ workspace: Workspace) async throws {
        reporter.begin(title)
        let value = Data((0..<SealedFileGroup.valueSize).map { _ in UInt8.random(in: 0...255) })
        let fixture = try VaultFixture(workspace: workspace, name: "async")
        for count in options.items {
            reporter.progress("   async: filling the vault to \(count) items")
            try fixture.grow(to: count, value: value)
            let url = try fixture.copy(to: try workspace.directory("async-\(count)"))
            let store = try await SealedFileStore.open(at: url, secret: fixture.secret, configuration: workspace.configuration)
            let memory = InMemoryStore()
            let keys = (0..<count).map(VaultFixture.credentialKey)
            for key in keys { try await memory.save(value, for: key, options: .default) }
            let picker = KeyPicker(keys)
            _ = try await store.load(keys[0])  // derives the device key once, as any first read does
            reporter.progress("   async: measuring \(count) items")
            let load = try await AsyncTimer.measurePair(
                Plan.fast(options),
                sync: { blackHole(try store.load(picker.next())) },
                async: { blackHole(try await store.load(picker.next())) })
            let save = try await AsyncTimer.measurePair(
                Plan.durable(options),
                sync: { try store.save(value, for: picker.next(), options: .default) },
                async: { try await store.save(value, for: picker.next(), options: .default) })
            let memoryLoad = try await AsyncTimer.measurePair(
                Plan.fast(options),
                sync: { blackHole(try memory.load(picker.next())) },
                async: { blackHole(try await memory.load(picker.next())) })
            add(reporter, "file_load", count, load, limit: 1.5)
            add(reporter, "file_save", count, save, limit: 1.1)
            add(reporter, "memory_load", count, memoryLoad, limit: nil)
        }
        reporter.note("*_async: the async API (AsyncTokenStorageAdapter) called from a task on the cooperative pool, timed in turn with *_sync (the same operation through TokenStorageAdapter, from the same task) with equal batches; the ratio is async over sync.")
        reporter.end()
    }

    private static func add(_ reporter: Reporter, _ name: String, _ items: Int, _ pair: (sync: Sample, async: Sample), limit: Double?) {
        let sync = Figure(group: title, name: name + "_sync", items: items, sample: pair.sync)
        var async = Figure(group: title, name: name + "_async", items: items, sample: pair.async)
        async.relate(to: sync)
        if let limit { async.checks.append(.atMost("ratio to sync", async.ratio!, limit)) }
        reporter.add(sync)
        reporter.add(async)
    }
}

/// The keys in a fixed stride order, shared by the closures of one measurement.
final class KeyPicker: @unchecked Sendable {
    // @unchecked: used by one task at a time (the measurements run their closures in turn).
    private let keys: [CredentialKey]
    private var index = 0
    init(_ keys: [CredentialKey]) { self.keys = keys }
    func next() -> CredentialKey {
        index = (index + 7919) % keys.count
        return keys[index]
    }
}
