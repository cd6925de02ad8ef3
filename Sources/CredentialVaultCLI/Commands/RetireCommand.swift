import CredentialVault

/// `credvault retire`: remove a vault for good, its rollback counter first.
package enum RetireCommand: Command {
    package static let name = "retire"
    package static let summary = "remove a vault for good, and its rollback counter (a TPM NV index) with it"
    package static let help = """
        usage: credvault retire --yes [key options]

        Removes the vault and every credential in it, for good. Its rollback counter goes first:
        a TPM NV index (NV space is small and shared), a keyring item or a counter file, which
        deleting the file alone would leave behind. The key (common options) must open the
        vault, and the custodian removes only a counter this vault's authorization opens.
        A copy older than its counter is refused (exit 13) and nothing is removed: the counter
        belongs to a newer copy of the vault (at another path?); delete such a stale copy as a
        plain file. --yes is required: nothing asks again.
          --yes                  remove it (without it: a usage error, nothing removed)

        """ + VaultOptions.help
    package static let flags: Set<String> = ["yes"]
    package static let options: Set<String> = []

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        _ = try args.positionals()
        let url = vault.request.vaultURL
        guard args.flags.contains("yes") else {
            throw UsageError("retire removes \(url.path) and every credential in it for good: add --yes")
        }
        guard try LockedVault.ifPresent(at: url) != nil else { throw CredentialVaultError.notAvailable("no vault at \(url.path)") }
        let key = try vault.request.unlock.explicitKey() ?? .device
        try SealedFileStore.retire(at: url, secret: key, configuration: try vault.configuration())
        io.status("retired \(url.path): the vault and its rollback counter are removed")
        return ExitCode.success
    }
}
