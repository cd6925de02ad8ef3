import CredentialVault
import Foundation
import Testing

/// The one conformance suite every `TokenStorageAdapter` backend must pass (in the spirit of
/// jaraco/keyring's backend tests). Run it from a test target with
/// `@Test(arguments: [backend], ConformanceCheck.allCases)`.
public enum ConformanceSuite {
    /// Runs one check against a fresh store of `backend`.
    public static func run(_ check: ConformanceCheck, on backend: ConformanceBackend) throws {
        let clock = ManualClock()
        let store = try backend.makeStore(clock)
        defer { _ = try? store.deleteAll() }
        let key = CredentialKey(service: "conformance.example", account: "alice")
        switch check {
        case .roundTripSizes:
            for size in [0, 1, 31, 4096, 1 << 20] {
                let value = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
                try store.save(value, for: key, options: .default)
                #expect(try store.load(key) == value, "size \(size) must round-trip exactly")
            }
        case .binaryValues:
            let value = Data([0, 0xFF, 0, 1, 0xFE, 0, 0, 0x80, 0xFF])
            try store.save(value, for: key, options: .default)
            #expect(try store.load(key) == value)
            let allBytes = Data((0...255).map { UInt8($0) })
            try store.save(allBytes, for: key, options: .portable)
            #expect(try store.load(key) == allBytes)
        case .unicodeNames:
            let unicode = CredentialKey(service: "сервис.日本語.example", account: "Zoë 👩‍💻 ñ")
            try store.save(Data("ключ".utf8), for: unicode, options: .default)
            #expect(try store.load(unicode) == Data("ключ".utf8))
            #expect(try store.listKeys(service: unicode.service) == [unicode])
        case .overwrite:
            try store.save(Data("first".utf8), for: key, options: .default)
            try store.save(Data("second, longer".utf8), for: key, options: .default)
            #expect(try store.load(key) == Data("second, longer".utf8))
            #expect(try store.listKeys(service: key.service).count == 1)
        case .deleteMissing:
            #expect(try store.delete(key) == false)
            #expect(try store.load(key) == nil)
            try store.save(Data("x".utf8), for: key, options: .default)
            #expect(try store.delete(key) == true)
            #expect(try store.load(key) == nil)
            #expect(try store.delete(key) == false)
        case .listKeys:
            let keys = [
                CredentialKey(service: "conformance.b", account: "2"), CredentialKey(service: "conformance.a", account: "1"),
                CredentialKey(service: "conformance.b", account: "1"),
            ]
            for k in keys { try store.save(Data(k.account.utf8), for: k, options: .default) }
            #expect(try store.listKeys(service: "conformance.b") == [keys[2], keys[0]])
            let all = try store.listKeys().filter { $0.service.hasPrefix("conformance.") }
            #expect(all == [keys[1], keys[2], keys[0]])
        case .take:
            try store.save(Data("verifier".utf8), for: key, options: .ephemeral())
            #expect(try store.take(key) == Data("verifier".utf8))
            #expect(try store.take(key) == nil)
            #expect(try store.load(key) == nil)
            try store.save(Data("persistent".utf8), for: key, options: .default)
            #expect(try store.take(key) == Data("persistent".utf8))
            #expect(try store.load(key) == nil)
        case .takeIsSingleUse:
            try store.save(Data("once".utf8), for: key, options: .ephemeral())
            let winners = try concurrently(8) { _ in try store.take(key) != nil ? 1 : 0 }
            #expect(winners.reduce(0, +) == 1, "exactly one concurrent taker gets the value")
        case .ephemeralExpiry:
            try store.save(Data("v".utf8), for: key, options: .ephemeral(ttl: .seconds(60)))
            clock.advance(by: .seconds(59))
            #expect(try store.load(key) == Data("v".utf8))
            clock.advance(by: .seconds(2))
            #expect(throws: CredentialVaultError.expired) { try store.take(key) }
            #expect(try store.load(key) == nil, "an expired credential is purged")
        case .ephemeralNeverListed:
            try store.save(Data("v".utf8), for: key, options: .ephemeral())
            let other = CredentialKey(service: key.service, account: "bob")
            try store.save(Data("w".utf8), for: other, options: .default)
            #expect(try store.listKeys(service: key.service) == [other])
            #expect(try store.metadata(for: key)?.isEphemeral == true)
        case .deviceOnlyByDefault:
            try store.save(Data("v".utf8), for: key)
            #expect(try store.metadata(for: key)?.accessibility == .deviceOnly)
            #expect(throws: CredentialVaultError.self) {
                try store.save(Data(), for: key, options: StorageOptions(accessibility: .portable, lifetime: .ephemeral(ttl: .seconds(5))))
            }
        case .portableMetadata:
            guard store.capabilities.supportsPortable else {
                #expect(throws: CredentialVaultError.self) { try store.save(Data(), for: key, options: .portable) }
                return
            }
            try store.save(Data("v".utf8), for: key, options: .portable)
            #expect(try store.metadata(for: key) == CredentialMetadata(key: key, accessibility: .portable, isEphemeral: false))
        case .deleteAll:
            let other = CredentialKey(service: "conformance.other", account: "x")
            try store.save(Data("1".utf8), for: key, options: .default)
            try store.save(Data("2".utf8), for: other, options: .default)
            #expect(try store.deleteAll(service: key.service) == 1)
            #expect(try store.load(key) == nil)
            #expect(try store.load(other) == Data("2".utf8))
        case .stringConveniences:
            try store.save(key: "conformance-token", value: "héllo")
            #expect(try store.load(key: "conformance-token") == "héllo")
            try store.delete(key: "conformance-token")
            #expect(try store.load(key: "conformance-token") == nil)
            let binary = CredentialKey(service: store.defaultService, account: "conformance-binary")
            try store.save(Data([0xFF, 0xFE]), for: binary, options: .default)
            #expect(throws: CredentialVaultError.self) { try store.load(key: "conformance-binary") }
            #expect(try store.load(binary) == Data([0xFF, 0xFE]), "a failed string load loses nothing")
            try store.delete(binary)
        case .invalidArguments:
            #expect(throws: CredentialVaultError.self) { try store.save(Data(), for: CredentialKey(service: "", account: "a"), options: .default) }
            #expect(throws: CredentialVaultError.self) { try store.save(Data(), for: CredentialKey(service: "s", account: "a\u{0}b"), options: .default) }
            #expect(throws: CredentialVaultError.self) { try store.save(Data(), for: key, options: .ephemeral(ttl: .zero)) }
        case .exactByteNames:
            try NameRules.exactBytes(store, reopen: backend.reopen.map { reopen in { try reopen(store, clock) } })
        case .controlCharactersRefused:
            try NameRules.controlCharacters(store)
        case .concurrentTasks:
            let results = try concurrently(16) { i in
                let k = CredentialKey(service: "conformance.concurrent", account: "task-\(i)")
                let value = Data("value-\(i)".utf8)
                try store.save(value, for: k, options: .default)
                return try store.load(k) == value ? 1 : 0
            }
            #expect(results.reduce(0, +) == 16)
            #expect(try store.listKeys(service: "conformance.concurrent").count == 16)
        case .persistenceAcrossReopen:
            guard let reopen = backend.reopen else {
                #expect(!store.capabilities.isPersistent, "a persistent backend must be reopenable")
                return
            }
            try store.save(Data("kept".utf8), for: key, options: .portable)
            try store.save(Data("pkce".utf8), for: CredentialKey(service: key.service, account: "verifier"), options: .ephemeral())
            let again = try reopen(store, clock)
            #expect(try again.load(key) == Data("kept".utf8))
            #expect(try again.take(CredentialKey(service: key.service, account: "verifier")) == Data("pkce".utf8))
        }
    }

    /// Runs `body` on `count` threads at once and returns their results in order.
    static func concurrently<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) throws -> T) throws -> [T] {
        let results = ResultBox<T>(count: count)
        DispatchQueue.concurrentPerform(iterations: count) { i in
            results.set(i, Result { try body(i) })
        }
        return try results.values()
    }
}

/// Collects per-thread results.
final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Result<T, any Error>?]
    init(count: Int) { storage = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ r: Result<T, any Error>) { lock.withLock { storage[i] = r } }
    func values() throws -> [T] { try lock.withLock { try storage.map { try $0!.get() } } }
}
