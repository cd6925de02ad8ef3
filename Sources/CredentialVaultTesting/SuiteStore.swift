import CredentialVault
import Foundation

/// The store as the suite's checks see it: each operation through the protocol the run is
/// about, so that every check is written once and run through both.
struct SuiteStore: Sendable {
    let store: StoreUnderTest
    let api: ConformanceAPI

    /// Throws when the store does not implement the run's protocol (a misconfigured test).
    init(_ store: StoreUnderTest, api: ConformanceAPI) throws {
        switch api {
        case .sync where store.sync == nil, .async where store.async == nil:
            throw SuiteError("the store does not implement the \(api) storage protocol")
        default: break
        }
        self.store = store
        self.api = api
    }

    var capabilities: BackendCapabilities { store.sync?.capabilities ?? store.async!.capabilities }
    var defaultService: String { store.sync?.defaultService ?? store.async!.defaultService }

    /// The options of the suite's persistent saves: the default (device-only), or `.portable`
    /// on a backend that cannot keep a credential device-only (a shared fleet store), which
    /// must refuse device-only with `unsupported` instead (checked by `deviceOnlyByDefault`).
    var persistentOptions: StorageOptions { capabilities.supportsDeviceOnly ? .default : .portable }

    func save(_ value: Data, for key: CredentialKey, options: StorageOptions = .default) async throws(CredentialVaultError) {
        switch api {
        case .sync: try store.sync!.save(value, for: key, options: options)
        case .async: try await store.async!.save(value, for: key, options: options)
        }
    }

    func load(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        switch api {
        case .sync: try store.sync!.load(key)
        case .async: try await store.async!.load(key)
        }
    }

    func take(_ key: CredentialKey) async throws(CredentialVaultError) -> Data? {
        switch api {
        case .sync: try store.sync!.take(key)
        case .async: try await store.async!.take(key)
        }
    }

    @discardableResult
    func delete(_ key: CredentialKey) async throws(CredentialVaultError) -> Bool {
        switch api {
        case .sync: try store.sync!.delete(key)
        case .async: try await store.async!.delete(key)
        }
    }

    func listKeys(service: String? = nil) async throws(CredentialVaultError) -> [CredentialKey] {
        switch api {
        case .sync: try store.sync!.listKeys(service: service)
        case .async: try await store.async!.listKeys(service: service)
        }
    }

    func listKeys(_ query: KeyQuery) async throws(CredentialVaultError) -> [CredentialKey] {
        switch api {
        case .sync: try store.sync!.listKeys(query)
        case .async: try await store.async!.listKeys(query)
        }
    }

    func metadata(for key: CredentialKey) async throws(CredentialVaultError) -> CredentialMetadata? {
        switch api {
        case .sync: try store.sync!.metadata(for: key)
        case .async: try await store.async!.metadata(for: key)
        }
    }

    @discardableResult
    func deleteAll(service: String? = nil) async throws(CredentialVaultError) -> Int {
        switch api {
        case .sync: try store.sync!.deleteAll(service: service)
        case .async: try await store.async!.deleteAll(service: service)
        }
    }

    func save(key: String, value: String) async throws(CredentialVaultError) {
        switch api {
        case .sync: try store.sync!.save(key: key, value: value)
        case .async: try await store.async!.save(key: key, value: value)
        }
    }

    func load(key: String) async throws(CredentialVaultError) -> String? {
        switch api {
        case .sync: try store.sync!.load(key: key)
        case .async: try await store.async!.load(key: key)
        }
    }

    func delete(key: String) async throws(CredentialVaultError) {
        switch api {
        case .sync: try store.sync!.delete(key: key)
        case .async: try await store.async!.delete(key: key)
        }
    }

    /// Takes `key` from `count` callers at once (threads for the synchronous protocol, each
    /// call blocking its own; child tasks for the asynchronous one); how many got the value.
    func concurrentTakes(_ count: Int, of key: CredentialKey) async throws -> Int {
        try await concurrently(count, sync: { store, _ in try store.take(key) != nil ? 1 : 0 }, async: { store, _ in
            try await store.take(key) != nil ? 1 : 0
        }).reduce(0, +)
    }

    /// Saves and loads back `count` distinct keys of `service` at once; how many read their own value.
    func concurrentRoundTrips(_ count: Int, service: String) async throws -> Int {
        @Sendable func key(_ i: Int) -> CredentialKey { CredentialKey(service: service, account: "task-\(i)") }
        @Sendable func value(_ i: Int) -> Data { Data("value-\(i)".utf8) }
        let options = persistentOptions
        return try await concurrently(
            count,
            sync: { store, i in
                try store.save(value(i), for: key(i), options: options)
                return try store.load(key(i)) == value(i) ? 1 : 0
            },
            async: { store, i in
                try await store.save(value(i), for: key(i), options: options)
                return try await store.load(key(i)) == value(i) ? 1 : 0
            }
        ).reduce(0, +)
    }

    private func concurrently<T: Sendable>(
        _ count: Int, sync: @escaping @Sendable (any TokenStorageAdapter, Int) throws -> T,
        async: @escaping @Sendable (any AsyncTokenStorageAdapter, Int) async throws -> T
    ) async throws -> [T] {
        switch api {
        case .sync:
            let results = ResultBox<T>(count: count)
            let store = self.store.sync!
            DispatchQueue.concurrentPerform(iterations: count) { i in results.set(i, Result { try sync(store, i) }) }
            return try results.values()
        case .async:
            let store = self.store.async!
            return try await withThrowingTaskGroup(of: (Int, T).self) { group in
                for i in 0..<count { group.addTask { (i, try await async(store, i)) } }
                var results = [T?](repeating: nil, count: count)
                for try await (i, value) in group { results[i] = value }
                return results.map { $0! }
            }
        }
    }
}

/// A misconfigured conformance run.
struct SuiteError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Collects per-thread results.
final class ResultBox<T: Sendable>: @unchecked Sendable {
    // @unchecked: every access to `storage` holds `lock`.
    private let lock = NSLock()
    private var storage: [Result<T, any Error>?]
    init(count: Int) { storage = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ r: Result<T, any Error>) { lock.withLock { storage[i] = r } }
    func values() throws -> [T] { try lock.withLock { try storage.map { try $0!.get() } } }
}
