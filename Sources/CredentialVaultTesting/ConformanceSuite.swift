import CredentialVault
import Foundation
import Testing

/// The one conformance suite every backend must pass, through each storage protocol it
/// implements (in the spirit of jaraco/keyring's backend tests): every check is written once
/// and runs through `TokenStorageAdapter` and through `AsyncTokenStorageAdapter`. Run it from a test
/// target, third-party backends' included:
///
/// ```swift
/// @Test(arguments: [backend], ConformanceCheck.allCases, ConformanceAPI.allCases)
/// func conformance(backend: ConformanceBackend, check: ConformanceCheck, api: ConformanceAPI) async throws {
///     try await ConformanceSuite.run(check, on: backend, through: api)
/// }
/// ```
public enum ConformanceSuite {
    /// Runs one check against a fresh store of `backend`, through `api`.
    public static func run(_ check: ConformanceCheck, on backend: ConformanceBackend, through api: ConformanceAPI) async throws {
        let clock = ManualClock()
        let store = try SuiteStore(backend.makeStore(clock), api: api)
        do {
            try await perform(check, on: store, backend: backend, clock: clock, api: api)
        } catch {
            _ = try? await store.deleteAll()
            throw error
        }
        _ = try? await store.deleteAll()
    }

    private static func perform(
        _ check: ConformanceCheck, on store: SuiteStore, backend: ConformanceBackend, clock: ManualClock, api: ConformanceAPI
    ) async throws {
        let key = CredentialKey(service: "conformance.example", account: "alice")
        let persistent = store.persistentOptions
        if check.needsEphemeral && !store.capabilities.supportsEphemeral {
            // A backend without ephemeral credentials refuses them: typed, and nothing stored.
            let refused = await #expect(throws: CredentialVaultError.self) { try await store.save(Data("v".utf8), for: key, options: .ephemeral()) }
            guard case .unsupported? = refused else {
                Issue.record("an ephemeral save on a backend without ephemeral credentials threw \(String(describing: refused)), not unsupported")
                return
            }
            #expect(try await store.load(key) == nil, "a refused save stored nothing")
            return
        }
        switch check {
        case .roundTripSizes:
            for size in [0, 1, 31, 4096, 1 << 20] {
                let value = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
                try await store.save(value, for: key, options: persistent)
                #expect(try await store.load(key) == value, "size \(size) must round-trip exactly")
            }
        case .binaryValues:
            let value = Data([0, 0xFF, 0, 1, 0xFE, 0, 0, 0x80, 0xFF])
            try await store.save(value, for: key, options: persistent)
            #expect(try await store.load(key) == value)
            let allBytes = Data((0...255).map { UInt8($0) })
            try await store.save(allBytes, for: key, options: .portable)
            #expect(try await store.load(key) == allBytes)
        case .unicodeNames:
            let unicode = CredentialKey(service: "сервис.日本語.example", account: "Zoë 👩‍💻 ñ")
            try await store.save(Data("ключ".utf8), for: unicode, options: persistent)
            #expect(try await store.load(unicode) == Data("ключ".utf8))
            #expect(try await store.listKeys(service: unicode.service) == [unicode])
        case .overwrite:
            try await store.save(Data("first".utf8), for: key, options: persistent)
            try await store.save(Data("second, longer".utf8), for: key, options: persistent)
            #expect(try await store.load(key) == Data("second, longer".utf8))
            #expect(try await store.listKeys(service: key.service).count == 1)
        case .deleteMissing:
            #expect(try await store.delete(key) == false)
            #expect(try await store.load(key) == nil)
            try await store.save(Data("x".utf8), for: key, options: persistent)
            #expect(try await store.delete(key) == true)
            #expect(try await store.load(key) == nil)
            #expect(try await store.delete(key) == false)
        case .listKeys:
            let keys = [
                CredentialKey(service: "conformance.b", account: "2"), CredentialKey(service: "conformance.a", account: "1"),
                CredentialKey(service: "conformance.b", account: "1"),
            ]
            for k in keys { try await store.save(Data(k.account.utf8), for: k, options: persistent) }
            #expect(try await store.listKeys(service: "conformance.b") == [keys[2], keys[0]])
            let all = try await store.listKeys().filter { $0.service.hasPrefix("conformance.") }
            #expect(all == [keys[1], keys[2], keys[0]])
        case .take:
            try await store.save(Data("verifier".utf8), for: key, options: .ephemeral())
            #expect(try await store.take(key) == Data("verifier".utf8))
            #expect(try await store.take(key) == nil)
            #expect(try await store.load(key) == nil)
            try await store.save(Data("persistent".utf8), for: key, options: persistent)
            #expect(try await store.take(key) == Data("persistent".utf8))
            #expect(try await store.load(key) == nil)
        case .takeIsSingleUse:
            try await store.save(Data("once".utf8), for: key, options: .ephemeral())
            #expect(try await store.concurrentTakes(8, of: key) == 1, "exactly one concurrent taker gets the value")
        case .ephemeralExpiry:
            try await store.save(Data("v".utf8), for: key, options: .ephemeral(ttl: .seconds(60)))
            clock.advance(by: .seconds(59))
            #expect(try await store.load(key) == Data("v".utf8))
            clock.advance(by: .seconds(2))
            await #expect(throws: CredentialVaultError.expired) { try await store.take(key) }
            #expect(try await store.load(key) == nil, "an expired credential is purged")
            try await store.save(Data("w".utf8), for: key, options: .ephemeral(ttl: .seconds(60)))
            clock.advance(by: .seconds(61))
            #expect(try await store.metadata(for: key) == nil, "an expired credential has no metadata")
        case .ephemeralNeverListed:
            try await store.save(Data("v".utf8), for: key, options: .ephemeral())
            let other = CredentialKey(service: key.service, account: "bob")
            try await store.save(Data("w".utf8), for: other, options: persistent)
            #expect(try await store.listKeys(service: key.service) == [other])
            let metadata = try #require(try await store.metadata(for: key))
            #expect(metadata.isEphemeral)
            // The expiry, where a backend reports it, is the save's time plus the TTL (the
            // suite's clock: backends take "now" from the clock they were given).
            if let expiry = metadata.expiresAt {
                #expect(abs(expiry.timeIntervalSince(clock.now().addingTimeInterval(600))) < 1, "expiresAt \(expiry)")
            }
            if let created = metadata.created, let modified = metadata.modified { #expect(created <= modified) }
            #expect(try await store.metadata(for: other)?.expiresAt == nil, "a persistent credential has no expiry")
        case .deviceOnlyByDefault:
            guard store.capabilities.supportsDeviceOnly else {
                // A backend that cannot keep a credential device-only refuses it: never a silent downgrade.
                await ExpectedRefusal.unsupported.expect("a device-only save") { try await store.save(Data("v".utf8), for: key) }
                #expect(try await store.load(key) == nil, "a refused save stored nothing")
                return
            }
            try await store.save(Data("v".utf8), for: key)
            #expect(try await store.metadata(for: key)?.accessibility == .deviceOnly)
            await ExpectedRefusal.invalidArgument.expect("a portable ephemeral credential") {
                try await store.save(Data(), for: key, options: StorageOptions(accessibility: .portable, lifetime: .ephemeral(ttl: .seconds(5))))
            }
        case .portableMetadata:
            guard store.capabilities.supportsPortable else {
                await ExpectedRefusal.unsupported.expect("a portable save") { try await store.save(Data(), for: key, options: .portable) }
                return
            }
            try await store.save(Data("v".utf8), for: key, options: .portable)
            // The dates are each backend's own (CredentialMetadata documents them): not compared.
            let metadata = try #require(try await store.metadata(for: key))
            #expect(metadata.key == key && metadata.accessibility == .portable && !metadata.isEphemeral)
        case .deleteAll:
            let other = CredentialKey(service: "conformance.other", account: "x")
            try await store.save(Data("1".utf8), for: key, options: persistent)
            try await store.save(Data("2".utf8), for: other, options: persistent)
            #expect(try await store.deleteAll(service: key.service) == 1)
            #expect(try await store.load(key) == nil)
            #expect(try await store.load(other) == Data("2".utf8))
        case .stringConveniences:
            guard store.capabilities.supportsDeviceOnly else {
                // The string conveniences save device-only credentials: refused here; the loads
                // and deletes work on what was saved with options.
                await ExpectedRefusal.unsupported.expect("a device-only string save") { try await store.save(key: "conformance-token", value: "héllo") }
                let text = CredentialKey(service: store.defaultService, account: "conformance-token")
                try await store.save(Data("héllo".utf8), for: text, options: persistent)
                #expect(try await store.load(key: "conformance-token") == "héllo")
                try await store.delete(key: "conformance-token")
                #expect(try await store.load(key: "conformance-token") == nil)
                return
            }
            try await store.save(key: "conformance-token", value: "héllo")
            #expect(try await store.load(key: "conformance-token") == "héllo")
            try await store.delete(key: "conformance-token")
            #expect(try await store.load(key: "conformance-token") == nil)
            let binary = CredentialKey(service: store.defaultService, account: "conformance-binary")
            try await store.save(Data([0xFF, 0xFE]), for: binary, options: persistent)
            await ExpectedRefusal.invalidArgument.expect("a string load of bytes that are not UTF-8") {
                _ = try await store.load(key: "conformance-binary")
            }
            #expect(try await store.load(binary) == Data([0xFF, 0xFE]), "a failed string load loses nothing")
            try await store.delete(binary)
        case .invalidArguments:
            await ExpectedRefusal.invalidArgument.expect("an empty service") {
                try await store.save(Data(), for: CredentialKey(service: "", account: "a"), options: persistent)
            }
            await ExpectedRefusal.invalidArgument.expect("a NUL in the account") {
                try await store.save(Data(), for: CredentialKey(service: "s", account: "a\u{0}b"), options: persistent)
            }
            await ExpectedRefusal.invalidArgument.expect("a zero TTL") { try await store.save(Data(), for: key, options: .ephemeral(ttl: .zero)) }
        case .exactByteNames:
            try await NameRules.exactBytes(
                store, reopen: backend.reopen.map { reopen in { try SuiteStore(reopen(store.store, clock), api: api) } })
        case .difficultNames:
            try await NameRules.difficultNames(
                store, refused: backend.refusedNames, reopen: backend.reopen.map { reopen in { try SuiteStore(reopen(store.store, clock), api: api) } })
        case .asyncDoesNotBlockThePool:
            guard api == .async else { return }
            // A call that blocks its thread holds a pool thread for its whole duration, and the
            // heartbeat's wake-up waits behind the other calls queued (see `blockedPoolBound`).
            // The calls run on a pool of their own beside the heartbeat, so that nothing else in
            // the process (tests in parallel) can stop it, and a blocking backend blocks only
            // that pool.
            let (roundTrips, gap) = try await Heartbeat.longestGap {
                try await store.concurrentRoundTrips(32, service: "conformance.heartbeat")
            }
            #expect(roundTrips == 32)
            #expect(gap < Heartbeat.blockedPoolBound, "the heartbeat stopped for \(gap) while the calls ran: a call blocked the cooperative pool")
        case .cancelledBeforeItRan:
            guard api == .async, let async = store.store.async else { return }
            let outcome = await withTaskGroup(of: Result<Void, CredentialVaultError>.self) { group in
                group.cancelAll()
                group.addTask {
                    do throws(CredentialVaultError) {
                        return .success(try await async.save(Data("c".utf8), for: key, options: persistent))
                    } catch { return .failure(error) }
                }
                return await group.next()!
            }
            switch outcome {
            case .success: #expect(try await store.load(key) == Data("c".utf8), "a save that returned did its work")
            case .failure(.cancelled): #expect(try await store.load(key) == nil, "a save that threw cancelled before it ran did nothing")
            case .failure(let error): Issue.record("a cancelled save threw \(error), neither done nor cancelled")
            }
        case .keyQueries:
            let keys = [
                CredentialKey(service: "conformance.q.app", account: "user:1"), CredentialKey(service: "conformance.q.app", account: "user:2"),
                CredentialKey(service: "conformance.q.app", account: "admin"), CredentialKey(service: "conformance.q.apx", account: "user:3"),
                CredentialKey(service: "conformance.r", account: "user:4"),
            ]
            for k in keys { try await store.save(Data(k.account.utf8), for: k, options: persistent) }
            try await store.save(Data("v".utf8), for: CredentialKey(service: "conformance.q.app", account: "user:ephemeral"), options: .ephemeral())
            #expect(try await store.listKeys(KeyQuery(service: "conformance.q.app", accountPrefix: "user:")) == [keys[0], keys[1]])
            #expect(try await store.listKeys(KeyQuery(servicePrefix: "conformance.q.ap")) == [keys[2], keys[0], keys[1], keys[3]])
            #expect(try await store.listKeys(KeyQuery(servicePrefix: "conformance.", accountPrefix: "user:")) == [keys[0], keys[1], keys[3], keys[4]])
            #expect(try await store.listKeys(KeyQuery(servicePrefix: "conformance.q", accountPrefix: "nobody")).isEmpty)
            // Prefixes compare bytes: a precomposed é is not a prefix of e + combining acute.
            #expect(try await store.listKeys(KeyQuery(servicePrefix: "conformance.q.app", accountPrefix: "user:\u{E9}")).isEmpty)
        case .concurrentTasks:
            #expect(try await store.concurrentRoundTrips(16, service: "conformance.concurrent") == 16)
            #expect(try await store.listKeys(service: "conformance.concurrent").count == 16)
        case .persistenceAcrossReopen:
            guard let reopen = backend.reopen else {
                #expect(!store.capabilities.isPersistent, "a persistent backend must be reopenable")
                return
            }
            try await store.save(Data("kept".utf8), for: key, options: .portable)
            try await store.save(Data("pkce".utf8), for: CredentialKey(service: key.service, account: "verifier"), options: .ephemeral())
            let again = try SuiteStore(reopen(store.store, clock), api: api)
            #expect(try await again.load(key) == Data("kept".utf8))
            #expect(try await again.take(CredentialKey(service: key.service, account: "verifier")) == Data("pkce".utf8))
        }
    }
}
