import CredentialVault
import CredentialVaultCLI
import Foundation
import Synchronization

/// `credvault migrate --from BACKEND --to BACKEND`: move every persistent credential.
enum MigrateCommand: Command {
    static let name = "migrate"
    static let summary = Registry.summary(of: name)
    static let help = """
        usage: credvault migrate --from BACKEND --to BACKEND [--service SERVICE] [--overwrite] [--json] [common options]

        Moves every persistent credential (of SERVICE when given) from one backend to another
        (file, secret-service, auto): each is copied, read back from the target and compared,
        and only then deleted from the source. Interrupted, nothing is lost: run it again to
        finish (SIGINT, SIGTERM or SIGHUP stop it after the credential in hand, exit code
        128+signal). On a terminal, stderr shows how many credentials are done of how many.
        Ephemeral credentials are not migrated. The file backend is the vault of --vault and the
        unlock options.
          --overwrite   replace a different value the target already holds under the same key
                        (without it such credentials stay in the source, exit code 3)
          --json        print the report as JSON instead of one line per credential

        Prints one "migrated<TAB>SERVICE<TAB>ACCOUNT" line per credential (or "conflict",
        "skipped-device-only", "vanished"), then a summary on stderr.

        """ + VaultOptions.help
    static let flags: Set<String> = ["overwrite"]
    static let options: Set<String> = ["from", "to", "service"]

    static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        // First, before any other thread exists (see `StopSignals`).
        let interruption = try Interruption.install()
        _ = try args.positionals()
        guard let from = args.options["from"], let to = args.options["to"] else {
            throw UsageError("give --from BACKEND and --to BACKEND")
        }
        let sourceKind = try vault.resolve(from).kind
        let targetKind = try vault.resolve(to).kind
        guard sourceKind != targetKind else { throw UsageError("--from and --to are both \(sourceKind)") }
        guard targetKind != .memory else {
            throw UsageError("--to memory would lose every credential when credvault exits")
        }
        // A missing vault: nothing to migrate from; created when it is the target.
        guard let source = try vault.openStore(named: from, create: false),
            let target = try vault.openStore(named: to, create: true)
        else {
            io.error("nothing to migrate: there is no vault at \(vault.request.vaultURL.path)")
            return ExitCode.success
        }
        let json = args.flags.contains("json")
        let migrator = CredentialMigrator(
            from: source, to: target, overwrite: args.flags.contains("overwrite"))
        let service = args.options["service"]
        let progress = TerminalProgress("credentials done")
        let handled = Mutex<(count: Int, total: Int)>((0, 0))
        let report: MigrationReport
        do {
            report = try interruption.run {
                try await migrator.migrate(service: service) { event in
                    guard !json else { return }
                    let (word, key): (String, CredentialKey) =
                        switch event {
                        case .migrated(let key): ("migrated", key)
                        case .skippedDeviceOnly(let key): ("skipped-device-only", key)
                        case .conflict(let key): ("conflict", key)
                        case .vanished(let key): ("vanished", key)
                        }
                    progress.printAbove { io.print(TerminalText.line(word, key.service, key.account)) }
                } counted: { count, total in
                    handled.withLock { $0 = (count, total) }
                    progress.update(count, of: total)
                }
            }
        } catch CredentialVaultError.cancelled where interruption.signal != nil {
            progress.finish()
            let (count, total) = handled.withLock { $0 }
            io.error("interrupted after \(count) of \(total) credential(s); the others are still in \(sourceKind): run the same command again to finish")
            return 128 + (interruption.signal ?? 0)
        } catch {
            progress.finish()
            throw error
        }
        progress.finish()
        if json {
            func names(_ keys: [CredentialKey]) -> [[String: String]] { keys.map { ["service": $0.service, "account": $0.account] } }
            let object: [String: Any] = [
                "from": sourceKind.rawValue, "to": targetKind.rawValue, "migrated": names(report.migrated),
                "skipped_device_only": names(report.skippedDeviceOnly), "conflicts": names(report.conflicts),
                "vanished": names(report.vanished), "complete": report.isComplete,
            ]
            io.write(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) + Data("\n".utf8))
        }
        io.error("\(sourceKind) -> \(targetKind): \(report)")
        if !report.conflicts.isEmpty {
            io.error("\(report.conflicts.count) credential(s) stay in \(sourceKind): the target holds other values; use --overwrite to replace them")
            return ExitCode.failure
        }
        return ExitCode.success
    }
}
