// The configuration provider's tests need the trait `Configuration` (scripts/test.sh enables every trait).
#if Configuration
import Configuration
import CredentialVault
import CredentialVaultConfiguration
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Sealed-file vaults for these tests: cheap key derivation, a device identity of their own.
enum ConfigTestVault {
    static let passphrase = "correct horse battery staple"
    /// The service and prefix the tests' credentials use.
    static let service = "api.example.com"
    static let prefix = "config/"

    static func mapping() throws -> VaultConfigKeyMapping { try VaultConfigKeyMapping(service: service, prefix: prefix) }

    static func configuration(_ dir: TempDirectory) -> SealedFileConfiguration {
        SealedFileConfiguration(device: DeviceIdentity(hostSecretURL: dir.path("host-secret"), machineID: "machine-config-tests"))
    }

    static func create(_ dir: TempDirectory) async throws -> SealedFileStore {
        try await SealedFileStore.create(
            at: dir.path("vault/config.cvault"), secret: .passphrase(passphrase), kdf: .insecureTestingOnly, configuration: configuration(dir))
    }

    /// The credential `prefix + key` of the tests' service.
    static func key(_ configKey: String) -> CredentialKey { CredentialKey(service: service, account: prefix + configKey) }
}

extension AsyncTokenStorageAdapter {
    /// Saves a UTF-8 value under the tests' mapping.
    func put(_ configKey: String, _ value: String) async throws {
        try await save(Data(value.utf8), for: ConfigTestVault.key(configKey), options: .portable)
    }
}

/// The values one `watchValue` caller got, in order, and a way to wait for the n-th.
final class WatchedValues: Sendable {
    private let values = Mutex<[String?]>([])
    private let arrived = Arrivals()

    var all: [String?] { values.withLock { $0 } }

    func record(_ result: Result<LookupResult, any Error>) {
        let text: String?
        switch result {
        case .success(let lookup):
            if case .string(let string)? = lookup.value?.content { text = string } else { text = nil }
        case .failure(let error):
            text = "error: \(error)"
        }
        values.withLock { $0.append(text) }
        arrived.arrive()
    }

    /// Waits (under a ceiling) until `count` values came, then returns them.
    func first(_ count: Int) async -> [String?] {
        _ = await arrived.reached(count)
        return all
    }
}

/// Watches `key` of `provider` as a string in a task of its own, recording every update.
func watch(_ provider: VaultConfigProvider, _ key: String) -> (WatchedValues, Task<Void, any Error>) {
    let watched = WatchedValues()
    let task = Task {
        try await provider.watchValue(forKey: AbsoluteConfigKey(ConfigKey(key)), type: .string) { updates in
            for await update in updates { watched.record(update) }
        }
    }
    return (watched, task)
}

/// The waits of a poll loop, handed over one at a time by the test (no clock involved).
final class Ticks: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let waits = Arrivals()

    init() { (stream, continuation) = AsyncStream<Void>.makeStream() }

    /// The poll loop's sleep: returns at the next tick, throws once the ticks are over.
    var sleep: @Sendable (Duration) async throws -> Void {
        { [stream, waits] _ in
            waits.arrive()
            var iterator = stream.makeAsyncIterator()
            guard await iterator.next() != nil else { throw CancellationError() }
        }
    }

    /// Whether the loop started its `n`-th wait (under a ceiling).
    func waiting(_ n: Int) async -> Bool { await waits.reached(n) }

    func tick() { continuation.yield() }
    func end() { continuation.finish() }
}
#endif

#if Configuration
/// An access reporter that keeps each event as swift-configuration's `AccessLogger` renders it
/// (each provider's `LookupResult.value` and the final value by their descriptions): what an
/// access log would show. (`AccessLogger` itself needs swift-configuration's `Logging` trait.)
final class RenderingAccessReporter: AccessReporter {
    private let lines = Mutex<[String]>([])

    /// Every event so far, one line each.
    var text: String { lines.withLock { $0.joined(separator: "\n") } }

    func report(_ event: AccessEvent) {
        var parts = ["key=\(event.metadata.key)"]
        for (index, provider) in event.providerResults.enumerated() {
            switch provider.result {
            case .success(let lookup): parts.append("\(index + 1).\(provider.providerName) encodedKey=\(lookup.encodedKey) value=\(lookup.value?.description ?? "<nil>")")
            case .failure(let error): parts.append("\(index + 1).\(provider.providerName) error=\(error)")
            }
        }
        switch event.result {
        case .success(let value): parts.append("value=\(value?.description ?? "nil")")
        case .failure(let error): parts.append("error=\(error)")
        }
        lines.withLock { $0.append(parts.joined(separator: " ")) }
    }
}
#endif
