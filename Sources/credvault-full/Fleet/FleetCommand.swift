import CredentialVault
import CredentialVaultCLI
import CredentialVaultPostgres
import Foundation

/// `credvault fleet init | add-host | remove-host | rotate | status | accept-restore`: the
/// fleet store's schema, hosts and data key (docs/FLEET.md).
enum FleetCommand: Command {
    static let name = "fleet"
    static let summary = Registry.summary(of: name)
    static let help = """
        usage: credvault fleet init|public-key|add-host NAME|remove-host NAME|rotate|status|accept-restore [options] [common options]

        The fleet store keeps credentials in PostgreSQL sealed on each host (the database sees
        only ciphertext); its data key is wrapped once per host secret. Connection: --postgres URL
        (or $CREDVAULT_POSTGRES), --fleet-schema; this host: --fleet-host and its
        --fleet-private-key or --fleet-device-key (enrolled by public key), or its --key-file or
        --passphrase-file (or
        --fleet-key-file / --fleet-passphrase-file).
          init               create the store's schema (refused when it exists) and enrol this host
          public-key         print this host's public key (of --fleet-private-key or
                             --fleet-device-key), to enrol it
          add-host NAME      enrol another host: --public-key HEX (its `fleet public-key`; rotations
                             re-key it), or with its own secret: --new-key-file PATH or
                             --new-passphrase-file PATH (no credential is re-sealed)
          remove-host NAME   drop a host's wrapping of the data key (never the last host; rotate
                             after removing a host you no longer trust)
          rotate             new data key, every credential re-sealed in one transaction; the
                             key is sealed to every host enrolled by public key; hosts with a
                             key file or passphrase (but this one) must be added again
          status             store id, schema version, key epoch, generation, credentials, hosts
          accept-restore     this host remembers the newest state of the store it has seen and
                             refuses an older one (exit 13: a restore, or a removed host writing
                             back an old copy); after a deliberate restore of the database, this
                             accepts its state on this host (run it on every host that refuses)
        Use it with any vault command: credvault store --backend postgres ...

        """ + VaultOptions.help
    static let flags: Set<String> = []
    static let options: Set<String> = ["new-key-file", "new-passphrase-file", "public-key"]
    /// Works on the fleet store: its errors are worded for it.
    static var defaultBackend: String { VaultBackend.postgres.rawValue }

    static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        guard let action = args.positionals.first else {
            throw UsageError("give init, public-key, add-host, remove-host, rotate, status or accept-restore")
        }
        switch action {
        case "init":
            _ = try args.positionals("action")
            let store = try PostgresStore.initialize(
                FleetOptions.configuration(vault), host: FleetOptions.host(vault), secret: FleetOptions.hostKey(vault), kdf: vault.request.kdf())
            io.print("initialised fleet store \(store.storeID) (schema version 1), host \(TerminalText.escaped(store.host)) enrolled")
        case "public-key":
            _ = try args.positionals("action")
            let key = try FleetOptions.hostKey(vault)
            switch key {
            case .keyPair, .device: break
            case .keyFile, .passphrase:
                throw UsageError(
                    "give this host's private key file with --fleet-private-key PATH (make one with credvault keygen), or --fleet-device-key")
            }
            io.print(try FleetHostSecret.publicKey(of: key).map { String(format: "%02x", $0) }.joined())
        case "add-host":
            let name = try args.positionals("action", "name")[1]
            let store = try FleetOptions.open(vault)
            if let hex = args.options["public-key"] {
                guard let publicKey = hexBytes(hex) else { throw UsageError("--public-key is 64 hex digits (credvault fleet public-key)") }
                try store.addHost(name, publicKey: publicKey)
            } else {
                try store.addHost(name, secret: try newHostKey(args), kdf: vault.request.kdf())
            }
            io.print("host \(TerminalText.escaped(name)) enrolled")
        case "remove-host":
            let name = try args.positionals("action", "name")[1]
            let store = try FleetOptions.open(vault)
            guard try store.removeHost(name) else {
                io.error("host \(TerminalText.escaped(name)) is not enrolled")
                return ExitCode.notFound
            }
            io.print("host \(TerminalText.escaped(name)) removed")
        case "rotate":
            _ = try args.positionals("action")
            let store = try FleetOptions.open(vault)
            let key = try FleetOptions.hostKey(vault)
            let before = try store.hosts().map(\.name)
            // A host enrolled by public key is re-keyed with the others; one with a key file or
            // passphrase stays by giving its key.
            var keep: [String: FleetHostSecret] = [:]
            switch key {
            case .keyPair, .device: break
            case .keyFile, .passphrase: keep[store.host] = key
            }
            let progress = TerminalProgress("credentials re-sealed")
            let rotated: PostgresStore
            do { rotated = try store.rotateDataKey(hosts: keep, kdf: vault.request.kdf(), progress: progress.update) } catch {
                progress.finish()
                throw error
            }
            progress.finish()
            let after = try rotated.hosts()
            let rekeyed = after.filter { $0.keyKind == "public key" && $0.name != store.host }.map(\.name)
            io.print("data key rotated (epoch \(rotated.keyEpoch)); every credential re-sealed")
            if !rekeyed.isEmpty { io.print("re-keyed by public key: " + rekeyed.map(TerminalText.escaped).joined(separator: ", ")) }
            let dropped = Set(before).subtracting(after.map(\.name)).sorted()
            if !dropped.isEmpty { io.print("enrol again: " + dropped.map(TerminalText.escaped).joined(separator: ", ")) }
        case "status":
            _ = try args.positionals("action")
            let status = try FleetOptions.open(vault).status()
            if args.flags.contains("json") {
                let object: [String: Any] = [
                    "store_id": status.storeID, "schema_version": status.schemaVersion, "key_epoch": status.keyEpoch,
                    "key_fingerprint": status.keyFingerprint,
                    "generation": status.generation, "credentials": status.records,
                    "hosts": status.hosts.map { ["name": $0.name, "key": $0.keyKind, "key_epoch": $0.keyEpoch] as [String: Any] },
                ]
                io.write(TerminalText.jsonEscaped(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) + Data("\n".utf8))
            } else {
                io.print("store id: \(status.storeID)")
                io.print("schema version: \(status.schemaVersion)")
                io.print("key epoch: \(status.keyEpoch)")
                io.print("key fingerprint: \(status.keyFingerprint)")
                io.print("generation: \(status.generation)")
                io.print("credentials: \(status.records)")
                for host in status.hosts { io.print("host: \(TerminalText.escaped(host.name)) (\(host.keyKind), epoch \(host.keyEpoch))") }
            }
        case "accept-restore":
            _ = try args.positionals("action")
            let store = try PostgresStore.acceptRestore(FleetOptions.configuration(vault), host: FleetOptions.host(vault), secret: FleetOptions.hostKey(vault))
            let status = try store.status()
            io.print("accepted the fleet store's state as restored (key epoch \(status.keyEpoch), generation \(status.generation), \(status.records) credentials) on this host")
        default:
            throw UsageError("unknown fleet action '\(action)' (init, add-host, remove-host, rotate, status, accept-restore)")
        }
        return ExitCode.success
    }

    /// The bytes of 64 hex digits (a public key), or `nil`.
    private static func hexBytes(_ text: String) -> Data? {
        let digits = Array(text.utf8)
        guard digits.count == 64 else { return nil }
        var bytes = Data()
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    /// The key of the host being enrolled.
    private static func newHostKey(_ args: ParsedArguments) throws -> FleetHostSecret {
        switch (args.options["new-key-file"], args.options["new-passphrase-file"]) {
        case (let path?, nil): return .keyFile(URL(fileURLWithPath: path))
        case (nil, let path?):
            guard case .passphrase(let bytes) = try SecretReader.passphrase(fromFile: path) else {
                throw UsageError("--new-passphrase-file did not give a passphrase")
            }
            return .passphrase(bytes)
        default: throw UsageError("give the new host's key: --new-key-file PATH or --new-passphrase-file PATH")
        }
    }
}
