#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// `credvault git-credential get|store|erase`, also run as `git-credential-credvault`: git's
/// credential helper protocol (gitcredentials(7)) over any backend.
package enum GitCredentialCommand: Command {
    package static let name = "git-credential"
    package static let summary = "git credential helper (git config credential.helper credvault)"
    package static let help = """
        usage: credvault git-credential [common options] get|store|erase
               git-credential-credvault [common options] get|store|erase   (a link to credvault)

        Speaks git's credential helper protocol on stdin and stdout. Set it up with
          git config --global credential.helper credvault
        (git then runs git-credential-credvault, a link to credvault on PATH), or with options:
          git config --global credential.helper 'credvault --backend file'
        A credential is kept under the service git:PROTOCOL://HOST (HOST with :PORT when git
        has one, then /PATH with credential.useHttpPath) and the account USERNAME; its value is
        the password, so credvault lookup and exec read it too. password_expiry_utc and
        oauth_refresh_token are kept with it when git sends them.
          get     answers username and password (the first account in name order when git
                  names none); answers nothing when there is none or it has expired
          store   stores git's username and password (ignored when one of protocol, host,
                  username, password is missing, as git's own helpers do; an empty username
                  or password, as git sends for single sign-on hosts, is kept as it is)
          erase   deletes the matching credential; when git sends the rejected password, only
                  if it is still the stored one (a newer one stored meanwhile is kept)
        Any other action is ignored. The backend is --backend, else $CREDVAULT_BACKEND, else
        auto (the Secret Service when it is reachable, else the sealed file). Nothing but the
        answer is written to stdout; errors go to stderr, without any value.

        """ + VaultOptions.help(defaultBackend: "auto")
    package static let flags: Set<String> = []
    package static let options: Set<String> = []
    package static var defaultBackend: String { "auto" }

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        guard args.positionals.count == 1 else { throw UsageError("give one action: get, store or erase") }
        let action = args.positionals[0]
        // gitcredentials(7): a helper silently ignores an operation it does not know.
        guard ["get", "store", "erase"].contains(action) else { return ExitCode.success }
        var request = try GitCredentialRequest(parsing: ProtocolInput.read(limit: GitCredentialRequest.limit, untilBlankLine: true, what: "credential request"))
        defer { request.wipe() }
        guard let service = request.service else { return ExitCode.success }
        switch action {
        case "get": return try get(service, request, vault, io)
        case "store": return try store(service, request, vault)
        default: return try erase(service, request, vault)
        }
    }

    private static func get(_ service: String, _ request: GitCredentialRequest, _ vault: VaultAccess, _ io: TerminalIO) throws -> Int32 {
        guard let store = try vault.openStore(create: false) else { return ExitCode.success }
        // Without a username from git, any account of the service: but not one whose name git's
        // protocol cannot carry (another program stored it; git never could), which would
        // otherwise stop the search before the accounts git did store.
        let accounts = try request.username.map { [$0] }
            ?? store.listKeys(service: service).map(\.account).filter(GitCredentialRecord.canCarry)
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        for account in accounts {
            let key = CredentialKey(service: service, account: account)
            guard (try? key.validate()) != nil, var value = try store.load(key) else { continue }
            defer { value.resetBytes(in: 0..<value.count) }
            guard var record = GitCredentialRecord(decoding: value) else {
                io.error("\(service) / \(account) is not a credential git can use (a malformed record)")
                return ExitCode.damaged
            }
            defer { record.wipe() }
            // Expired: not answered (git 2.41+ drops it itself; an older git would send it,
            // be refused and erase it), so the next account, or the prompt, answers instead.
            if let expiry = record.passwordExpiry.flatMap({ Int64($0) }), expiry <= Int64(time(nil)) { continue }
            guard var answer = record.answer(username: account) else {
                io.error("\(service) / \(account) holds a NUL, CR or LF byte, which git's protocol cannot carry")
                return ExitCode.failure
            }
            defer { answer.resetBytes(in: 0..<answer.count) }
            try io.output(answer)
            return ExitCode.success
        }
        return ExitCode.success
    }

    private static func store(_ service: String, _ request: GitCredentialRequest, _ vault: VaultAccess) throws -> Int32 {
        // Absent and empty are different: `username=` (an SSO host's empty user name) and an
        // empty password are stored as they are, as git's own store and cache helpers keep them.
        guard let username = request.username, let password = request.password else { return ExitCode.success }
        let key = CredentialKey(service: service, account: username, label: "git credential for \(service.dropFirst(4))")
        try key.validate()
        var record = GitCredentialRecord(password: password, passwordExpiry: request.passwordExpiry, refreshToken: request.refreshToken)
        var value = record.encoded
        defer {
            value.resetBytes(in: 0..<value.count)
            record.wipe()
        }
        guard let store = try vault.openStore(create: true) else { return ExitCode.failure }
        // git stores after every authenticated request, also what this helper just answered:
        // an unchanged credential is not written again (no journal entry, no new timestamp).
        if var current = try store.load(key) {
            defer { current.wipe() }
            if constantTimeEquals(current, value) { return ExitCode.success }
        }
        try store.save(value, for: key, options: StorageOptions(accessibility: .deviceOnly))
        return ExitCode.success
    }

    private static func erase(_ service: String, _ request: GitCredentialRequest, _ vault: VaultAccess) throws -> Int32 {
        guard let store = try vault.openStore(create: false) else { return ExitCode.success }
        let accounts = try request.username.map { [$0] } ?? store.listKeys(service: service).map(\.account)
        for account in accounts {
            let key = CredentialKey(service: service, account: account)
            guard (try? key.validate()) != nil else { continue }
            if let rejected = request.password {
                // Only the credential git was given: one stored meanwhile (another clone that
                // prompted and succeeded) is not the one the server rejected.
                guard var value = try store.load(key) else { continue }
                defer { value.resetBytes(in: 0..<value.count) }
                guard var record = GitCredentialRecord(decoding: value) else { continue }
                defer { record.wipe() }
                guard constantTimeEquals(record.password, rejected) else { continue }
            }
            _ = try store.delete(key)
        }
        return ExitCode.success
    }
}
