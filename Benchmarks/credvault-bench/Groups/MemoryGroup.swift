import CredentialVault
import Foundation

/// Group 4a: the in-memory backend (values in one libsodium-guarded arena).
enum MemoryGroup {
    static let title = "In-memory backend: store with N items (128 B values)"

    static func run(_ options: Options, _ reporter: Reporter) throws {
        reporter.begin(title)
        let value = Data((0..<128).map { _ in UInt8.random(in: 0...255) })
        let plan = Plan.fast(options)
        for count in options.items {
            let store = InMemoryStore()
            let keys = (0..<count).map(VaultFixture.credentialKey)
            for key in keys { try store.save(value, for: key, options: .default) }
            var next = 0
            func pick() -> CredentialKey {
                next = (next + 7919) % count
                return keys[next]
            }
            let samples = try Timer.measureInterleaved(plan, [
                { try store.save(value, for: pick(), options: .default) },
                { blackHole(try store.load(pick())) },
            ])
            reporter.add(Figure(group: title, name: "memory_save", items: count, sample: samples[0]))
            reporter.add(Figure(group: title, name: "memory_load", items: count, sample: samples[1]))
        }
        reporter.end()
    }
}
