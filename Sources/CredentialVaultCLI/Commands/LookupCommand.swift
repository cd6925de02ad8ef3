import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `credvault lookup SERVICE ACCOUNT`: exactly the stored bytes on stdout.
package enum LookupCommand: Command {
    package static let name = "lookup"
    package static let summary = "write a credential's exact bytes to stdout"
    package static let help = """
        usage: credvault lookup SERVICE ACCOUNT [--take] [common options]

        Writes exactly the stored bytes to stdout (no newline added). Exit code 1 when there is
        no such credential, 3 when stdout cannot be written (a closed pipe, a full disk).
          --take   delete it once it was written (single use); if stdout cannot be written, it
                   stays stored

        """ + VaultOptions.help
    package static let flags: Set<String> = ["take"]
    package static let options: Set<String> = []

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        let names = try args.positionals("service", "account")
        let key = CredentialKey(service: names[0], account: names[1])
        try key.validate()
        guard let store = try vault.openStore(create: false) else { return notFound(names, io) }
        let found = args.flags.contains("take") ? try take(key, from: store, io) : try write(store.load(key), io)
        return found ? ExitCode.success : notFound(names, io)
    }

    /// Writes `value` (if any) and wipes it; whether there was one.
    private static func write(_ value: Data?, _ io: TerminalIO) throws(OutputError) -> Bool {
        guard var value else { return false }
        defer { value.resetBytes(in: 0..<value.count) }
        try io.output(value)
        return true
    }

    /// Writes the value, then deletes it: the delete is committed only after the value was
    /// written (and made durable when stdout is a file), so a failed write leaves it stored.
    ///
    /// A store with exclusive access (the sealed file) does the three steps under its lock, so
    /// of several concurrent takers, in any processes, exactly one writes the value. Another
    /// store (the Secret Service) takes it in one step first and, when the write fails, stores
    /// it back with its accessibility and label (an ephemeral one with a fresh default TTL),
    /// unless a value was stored under the key meanwhile: a newer value is never replaced by
    /// the older one.
    private static func take(_ key: CredentialKey, from store: any TokenStorageAdapter, _ io: TerminalIO) throws -> Bool {
        if let exclusive = store as? any TokenStorageAdapter & ExclusiveAccessStore {
            return try runBlocking {
                try await exclusive.withExclusiveAccess {
                    guard try write(exclusive.load(key), io) else { return false }
                    try exclusive.delete(key)
                    return true
                }
            }
        }
        let metadata = try store.metadata(for: key)
        guard var value = try store.take(key) else { return false }
        defer { value.resetBytes(in: 0..<value.count) }
        do {
            try io.output(value)
        } catch {
            guard try store.metadata(for: key) == nil else { throw error }  // superseded: keep the newer value
            let options = StorageOptions(
                accessibility: metadata?.accessibility ?? .deviceOnly,
                lifetime: metadata?.isEphemeral == true ? .ephemeral(ttl: Lifetime.defaultEphemeralTTL) : .persistent)
            try store.save(value, for: metadata?.key ?? key, options: options)
            throw error
        }
        return true
    }

    private static func notFound(_ names: [String], _ io: TerminalIO) -> Int32 {
        io.error("no credential \(names[0]) / \(names[1])")
        return ExitCode.notFound
    }
}
