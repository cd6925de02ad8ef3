import CredentialVault
import CredentialVaultSecretService
import Foundation

/// Group 4b: the Secret Service backend's save and load next to bare libsecret calls on a held
/// connection, on the default collection filled to N items, measured in turn (A B, B A ...).
///
/// It writes up to 1,000 items, so it runs only on a private keyring (`scripts/with-keyring.sh`
/// sets `CREDVAULT_TEST_KEYRING`) unless `--session-keyring` is given, and never prompts: a
/// locked collection is skipped.
enum SecretServiceGroup {
    static let title = "Secret Service backend vs bare libsecret (held connection), default collection with N items"
    static let maxItems = 1_000

    static func run(_ options: Options, _ reporter: Reporter) throws {
        reporter.begin(title)
        defer { reporter.end() }
        let environment = ProcessInfo.processInfo.environment
        guard environment["CREDVAULT_TEST_KEYRING"] == "unlocked" || options.useSessionKeyring else {
            reporter.note("skipped: no private keyring; run under `scripts/with-keyring.sh` (or pass --session-keyring to use this session's, which gets up to 1,000 items written and removed)")
            return
        }
        let store = SecretServiceStore()
        do {
            guard try !store.status().isLocked else {
                reporter.note("skipped: the default collection is locked (the benchmark never prompts)")
                return
            }
        } catch {
            reporter.note("skipped: no Secret Service reachable (\(error))")
            return
        }
        let bare = try BareLibSecret()
        let value = Data((0..<128).map { _ in UInt8.random(in: 0...255) })
        let counts = options.items.filter { $0 <= maxItems }
        var filled = 0
        defer { if options.useSessionKeyring { cleanUp(store, filled: filled) } }
        for count in counts {
            reporter.progress("   filling the default collection to \(count) items")
            while filled < count {
                let key = VaultFixture.credentialKey(filled)
                try bare.store(value, service: key.service, account: key.account)
                filled += 1
            }
            let hot = Array(Set([0, count / 2, count - 1])).sorted().map(VaultFixture.credentialKey)
            let bareHot = (0..<hot.count).map { CredentialKey(service: "bare.example.com", account: "bare-\($0)") }
            for key in bareHot { try bare.store(value, service: key.service, account: key.account) }
            var turn = 0
            func next() -> Int {
                turn = (turn + 1) % hot.count
                return turn
            }
            let plan = Plan.durable(options)
            let saves = try Timer.measureInterleaved(plan, [
                { try store.save(value, for: hot[next()], options: .default) },
                { let key = bareHot[next()]; try bare.store(value, service: key.service, account: key.account) },
            ])
            let loads = try Timer.measureInterleaved(plan, [
                { guard try store.load(hot[next()]) == value else { throw BenchError("Secret Service load lost a value") } },
                {
                    let key = bareHot[next()]
                    guard try bare.lookup(service: key.service, account: key.account) == value else {
                        throw BenchError("bare lookup lost a value")
                    }
                },
            ])
            for (name, samples) in [("secret_service_store", saves), ("secret_service_lookup", loads)] {
                let raw = Figure(group: title, name: "raw_\(name)", items: count, sample: samples[1])
                var ours = Figure(group: title, name: name, items: count, sample: samples[0])
                ours.relate(to: raw)
                ours.checks.append(.atMost("ratio to bare", ours.ratio!, 1.2))
                reporter.add(ours)
                reporter.add(raw)
            }
        }
        reporter.note("ours: `SecretServiceStore.save` (device-only, the default: the key's lock file held, `SearchItems` and `CreateItem` with replace sent together, so the hot key's item is rewritten in place, one keyring write; the key's other items would then be deleted, none here) and `load` (`SearchItems` in both collections, then `GetSecrets`); raw: `secret_service_store_sync` (one `CreateItem` with replace on the `default` alias) / `secret_service_lookup_sync` on a held connection.")
    }

    /// Deletes what the benchmark wrote to the session's keyring (a private one is thrown away).
    private static func cleanUp(_ store: SecretServiceStore, filled: Int) {
        for index in 0..<filled { _ = try? store.delete(VaultFixture.credentialKey(index)) }
        for index in 0..<3 { _ = try? store.delete(CredentialKey(service: "bare.example.com", account: "bare-\(index)")) }
    }
}
