#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CredentialVault

/// `credvault docker-credential store|get|erase|list|version`, also run as
/// `docker-credential-credvault`: docker's credential-helper protocol over any backend.
package enum DockerCredentialCommand: Command {
    package static let name = "docker-credential"
    package static let summary = "docker credential helper (\"credsStore\": \"credvault\")"
    package static let help = """
        usage: credvault docker-credential [common options] store|get|erase|list|version
               docker-credential-credvault store|get|erase|list|version   (a link to credvault)

        Speaks docker's credential-helper protocol: set "credsStore": "credvault" (or
        "credHelpers": {"REGISTRY": "credvault"}) in ~/.docker/config.json, with
        docker-credential-credvault, a link to credvault, on PATH.
          store   reads {"ServerURL", "Username", "Secret"} (JSON) from stdin and keeps the
                  secret under the service docker:SERVERURL and the account USERNAME, replacing
                  any other account of that registry
          get     reads a server URL from stdin, writes {"ServerURL", "Username", "Secret"}
          erase   reads a server URL from stdin, deletes its credential (none: not an error,
                  as with docker's Secret Service helper)
          list    writes {"SERVERURL": "USERNAME", ...}
        As docker expects: an error is one line on stdout with exit code 1, "credentials not
        found in native keychain" when get asks for a registry it does not know. Every action
        uses the server URL without surrounding white space; in store's JSON a key given twice
        keeps its last value and keys match case-insensitively, as Go decodes it. The backend
        is --backend, else $CREDVAULT_BACKEND, else auto (the Secret Service when it is
        reachable, else the sealed file). No secret is written anywhere but get's answer.

        """ + VaultOptions.help(defaultBackend: "auto")
    package static let flags: Set<String> = []
    package static let options: Set<String> = []
    package static var defaultBackend: String { "auto" }

    /// The largest input read (docker sends a few hundred bytes).
    static let limit = 1 << 20

    /// A failure in docker's terms: `message` on stdout, exit code 1.
    struct Failure: Error {
        let message: String
    }

    package static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        do {
            guard args.positionals.count == 1 else { throw Failure(message: "Usage: docker-credential-credvault <store|get|erase|list|version>") }
            switch args.positionals[0] {
            case "store": try store(vault)
            case "get": try get(vault, io)
            case "erase": try erase(vault)
            case "list": try list(vault, io)
            case "version": io.print("docker-credential-credvault (CredentialVault)")
            case let action: throw Failure(message: "Unknown credential action `\(TerminalText.escaped(action))`")
            }
            return ExitCode.success
        } catch is OutputError {
            return ExitCode.failure
        } catch {
            io.print(TerminalText.escaped(describe(error)))
            return ExitCode.notFound
        }
    }

    /// The one line docker shows for `error` (never a value: none of these errors holds one).
    private static func describe(_ error: any Error) -> String {
        switch error {
        case let failure as Failure: failure.message
        case let usage as UsageError: usage.message
        case let locked as LockedKeyringError: locked.message
        case let vault as CredentialVaultError: vault.description
        default: "cannot handle the credentials"
        }
    }

    private static func store(_ vault: VaultAccess) throws {
        var input = try ProtocolInput.read(limit: limit, untilBlankLine: false, what: "credentials JSON")
        defer { input.resetBytes(in: 0..<input.count) }
        // A decoding error can quote the input: replaced by a message of our own.
        guard let credentials = DockerCredentials(decodingAsGoDoes: input) else {
            throw Failure(message: "the input is not docker's credentials JSON ({\"ServerURL\", \"Username\", \"Secret\"})")
        }
        let serverURL = DockerCredentials.trimmed(credentials.ServerURL)
        guard !serverURL.isEmpty else { throw Failure(message: DockerCredentials.Message.missingServerURL) }
        guard !credentials.Username.isEmpty else { throw Failure(message: DockerCredentials.Message.missingUsername) }
        let service = DockerCredentials.service(serverURL)
        let key = CredentialKey(service: service, account: credentials.Username, label: "docker credential for \(serverURL)")
        try key.validate()
        guard let store = try vault.openStore(create: true) else { throw Failure(message: "no store") }
        var secret = Data(credentials.Secret.utf8)
        defer { secret.resetBytes(in: 0..<secret.count) }
        try store.save(secret, for: key, options: StorageOptions(accessibility: .deviceOnly))
        // One credential per registry, as docker's own helpers keep: the new one first, so a
        // failure here never leaves the registry with none.
        for other in try store.listKeys(service: service) where other != key { _ = try store.delete(other) }
    }

    private static func get(_ vault: VaultAccess, _ io: TerminalIO) throws {
        let serverURL = try readServerURL()
        guard let store = try vault.openStore(create: false),
            let key = try store.listKeys(service: DockerCredentials.service(serverURL)).min(by: { Array($0.account.utf8).lexicographicallyPrecedes(Array($1.account.utf8)) }),
            var value = try store.load(key)
        else { throw Failure(message: DockerCredentials.Message.notFound) }
        defer { value.resetBytes(in: 0..<value.count) }
        guard let secret = String(validating: value, as: UTF8.self) else {
            throw Failure(message: "the stored secret for \(serverURL) is not UTF-8 text, which docker's JSON cannot carry")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var answer = try encoder.encode(DockerCredentials(ServerURL: serverURL, Username: key.account, Secret: secret))
        defer { answer.resetBytes(in: 0..<answer.count) }
        try io.output(TerminalText.jsonEscaped(answer) + Data("\n".utf8))
    }

    /// Deletes the registry's credentials. A registry with none is not an error, as in
    /// docker's Secret Service and Windows helpers (libsecret's clear finds nothing and reports
    /// no error): `docker logout` then has nothing to warn about.
    private static func erase(_ vault: VaultAccess) throws {
        let serverURL = try readServerURL()
        guard let store = try vault.openStore(create: false) else { return }
        for key in try store.listKeys(service: DockerCredentials.service(serverURL)) { _ = try store.delete(key) }
    }

    private static func list(_ vault: VaultAccess, _ io: TerminalIO) throws {
        var registries: [String: String] = [:]
        if let store = try vault.openStore(create: false) {
            for key in try store.listKeys() where key.service.hasPrefix(DockerCredentials.prefix) {
                let serverURL = String(key.service.dropFirst(DockerCredentials.prefix.count))
                if let known = registries[serverURL], !Array(key.account.utf8).lexicographicallyPrecedes(Array(known.utf8)) { continue }
                registries[serverURL] = key.account
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try io.output(TerminalText.jsonEscaped(encoder.encode(registries)) + Data("\n".utf8))
    }

    /// The server URL `get` and `erase` read: all of stdin, without surrounding white space
    /// (trimmed as `store` trims the one it stores).
    private static func readServerURL() throws -> String {
        var input = try ProtocolInput.read(limit: limit, untilBlankLine: false, what: "server URL")
        defer { input.resetBytes(in: 0..<input.count) }
        guard let text = String(validating: input, as: UTF8.self) else { throw Failure(message: "the server URL is not UTF-8") }
        let serverURL = DockerCredentials.trimmed(text)
        guard !serverURL.isEmpty else { throw Failure(message: DockerCredentials.Message.missingServerURL) }
        return serverURL
    }
}
