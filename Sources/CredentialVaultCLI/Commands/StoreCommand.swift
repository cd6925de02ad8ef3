import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `credvault store SERVICE ACCOUNT`: the secret comes from stdin, byte for byte.
package enum StoreCommand: Command {
    package static let name = "store"
    package static let summary = "store a credential read from stdin"
    package static let help = """
        usage: credvault store SERVICE ACCOUNT [--label TEXT] [--portable] [--ttl SECONDS] [common options]

        Reads the secret from stdin (raw bytes, nothing stripped) and stores it under SERVICE and
        ACCOUNT, replacing any previous value. Creates the vault when there is none.
          --portable      may leave this machine (default: device-only)
          --ttl SECONDS   ephemeral: expires after SECONDS, never listed
          --label TEXT    a human-readable label

        """ + VaultOptions.help
    package static let flags: Set<String> = ["portable"]
    package static let options: Set<String> = ["label", "ttl"]

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        let names = try args.positionals("service", "account")
        let key = CredentialKey(service: names[0], account: names[1], label: args.options["label"])
        try key.validate()
        var options = StorageOptions(accessibility: args.flags.contains("portable") ? .portable : .deviceOnly)
        if let ttl = args.options["ttl"] {
            guard let seconds = Int(ttl), seconds > 0 else { throw UsageError("--ttl takes a positive number of seconds") }
            options.lifetime = .ephemeral(ttl: .seconds(seconds))
        }
        var secret = try io.readStdin()
        defer { secret.resetBytes(in: 0..<secret.count) }
        guard let store = try vault.openStore(create: true) else { return ExitCode.failure }
        try store.save(secret, for: key, options: options)
        return ExitCode.success
    }
}

/// `credvault delete SERVICE ACCOUNT`.
package enum DeleteCommand: Command {
    package static let name = "delete"
    package static let summary = "delete a credential"
    package static let help = """
        usage: credvault delete SERVICE ACCOUNT [common options]

        Deletes the credential. Exit code 1 when there was none.

        """ + VaultOptions.help
    package static let flags: Set<String> = []
    package static let options: Set<String> = []

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        let names = try args.positionals("service", "account")
        let key = CredentialKey(service: names[0], account: names[1])
        try key.validate()
        guard let store = try vault.openStore(create: false), try store.delete(key)
        else {
            io.error("no credential \(names[0]) / \(names[1])")
            return ExitCode.notFound
        }
        return ExitCode.success
    }
}

/// `credvault list`: one `SERVICE<TAB>ACCOUNT` line per credential, or JSON.
package enum ListCommand: Command {
    package static let name = "list"
    package static let summary = "list stored credentials (names only)"
    package static let help = """
        usage: credvault list [--service SERVICE] [--json] [common options]

        Prints one SERVICE<TAB>ACCOUNT line per persistent credential (ephemeral ones are never
        listed), control characters in names shown as \\xHH; --json prints an array of
        {service, account, label, accessibility, created, modified}, the dates in ISO 8601 (UTC,
        to the millisecond) and left out where the backend does not know them.

        """ + VaultOptions.help
    package static let flags: Set<String> = []
    package static let options: Set<String> = ["service"]

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        _ = try args.positionals()
        let store = try vault.openStore(create: false)
        let keys = try store?.listKeys(service: args.options["service"]) ?? []
        if args.flags.contains("json") {
            var items: [[String: String]] = []
            for key in keys {
                var item = ["service": key.service, "account": key.account]
                if let label = key.label { item["label"] = label }
                if let meta = try store?.metadata(for: key) {
                    item["accessibility"] = meta.accessibility.rawValue
                    item["created"] = meta.created.map(timestamp)
                    item["modified"] = meta.modified.map(timestamp)
                }
                items.append(item)
            }
            io.write(TerminalText.jsonEscaped(try JSONOutput.sorted(items)) + Data("\n".utf8))
        } else {
            for key in keys { io.print(TerminalText.line(key.service, key.account)) }
        }
        return ExitCode.success
    }

    /// `date` as `2027-01-15T08:00:00.125Z`: ISO 8601 in UTC, with the milliseconds a store
    /// records (a whole second, from the Secret Service, ends in `.000`). A store's date is
    /// its milliseconds divided by 1000 in a `Double`, often a hair below the millisecond, and
    /// the formatter's fraction truncates: so the millisecond is rounded here, in integers, and
    /// only the whole second (exact in a `Date`) goes through the formatter.
    static func timestamp(_ date: Date) -> String {
        let ms = (date.timeIntervalSince1970 * 1000).rounded()
        guard ms.isFinite, abs(ms) < 9e15 else { return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }
        let total = Int64(ms)
        var (seconds, fraction) = (total / 1000, total % 1000)
        if fraction < 0 { (seconds, fraction) = (seconds - 1, fraction + 1000) }  // before 1970
        let whole = Date(timeIntervalSince1970: Double(seconds)).formatted(Date.ISO8601FormatStyle())
        // `...:SSZ` becomes `...:SS.mmmZ`.
        return String(whole.dropLast()) + "." + String(String(fraction + 1000).dropFirst()) + "Z"
    }
}
