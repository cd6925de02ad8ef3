import CredentialVault
import CredentialVaultAuth
import CredentialVaultCLI
import Foundation

/// `credvault insforge signup|signin|verify|reset|whoami|signout --url URL`: an InsForge
/// backend's e-mail and password sign-in, with the session kept in the chosen vault.
/// Passwords and codes come from stdin or files, never from arguments.
enum InsForgeCommand: Command {
    static let name = "insforge"
    static let summary = Registry.summary(of: name)
    static let help = """
        usage: credvault insforge ACTION --url URL [options] [common options]

        Signs in to the InsForge backend at URL (its auth API under /api/auth) and keeps the
        session (access token, refresh token, user) in the vault; whoami refreshes it when due.
        Passwords and codes are read from a file or from stdin (one per line, in the order
        listed), never from arguments.

          signup --email E [--name N] [--redirect-to URL]   password: --password-file or stdin
          signin --email E                                  password: --password-file or stdin
          verify --email E                                  6-digit code: --code-file or stdin
          verify --email E --resend [--redirect-to URL]     sends the verification e-mail again
          reset --email E --send [--redirect-to URL]        sends the password reset e-mail
          reset --email E                                   code (--code-file or stdin line 1), then the
                                                            new password (--password-file or stdin line 2)
          whoami [--json]                                   the signed-in user, as the backend knows them
          signout                                           deletes the session from the vault

          --url URL               the backend (required)
          --client-type desktop|server
                                  how the client identifies itself (default desktop)
          --anon-key-file PATH    the project's anon key, sent on sign-up when the backend wants one
          --log-level LEVEL       trace, debug, info, warning (default), error, critical

        Exit codes besides the common ones: 1 not signed in, 11 the backend refused (wrong
        password or code, e-mail not verified, refresh token refused: sign in again), 12 the
        backend could not be reached, timed out or is rate limiting.

        """ + VaultOptions.help
    static let flags: Set<String> = ["resend", "send"]
    static let options: Set<String> = [
        "url", "email", "name", "password-file", "code-file", "redirect-to", "client-type", "anon-key-file",
        "log-level",
    ]

    static func run(_ args: ParsedArguments, _ io: TerminalIO, _ vault: VaultAccess) throws -> Int32 {
        guard args.positionals.count == 1, let action = args.positionals.first else {
            throw UsageError("expected one ACTION: signup, signin, verify, reset, whoami or signout")
        }
        guard let text = args.options["url"], let url = URL(string: text) else { throw UsageError("--url URL is required") }
        let input = SecretInput(io: io)
        let writes = ["signup", "signin", "verify"].contains(action)
        let store: any TokenStorageBackend
        switch action {
        case "signup", "signin", "verify", "whoami", "signout":
            guard let opened = try vault.openStore(create: writes) else {
                io.error("not signed in (there is no vault at \(vault.request.vaultURL.path))")
                return ExitCode.notFound
            }
            store = opened
        case "reset":
            store = InMemoryStore()  // a reset stores nothing
        default:
            throw UsageError("unknown action '\(action)': signup, signin, verify, reset, whoami or signout")
        }
        let client = try makeClient(args, url: url, store: store)
        do {
            return try perform(action, args, client, input, io)
        } catch let error as InsForgeError {
            io.error(error.description)
            return exitCode(error)
        }
    }

    private static func perform(
        _ action: String, _ args: ParsedArguments, _ client: InsForgeClient, _ input: SecretInput, _ io: TerminalIO
    ) throws -> Int32 {
        let redirectTo = args.options["redirect-to"]
        switch action {
        case "signup":
            let email = try required(args, "email")
            let password = try input.secret(file: args.options["password-file"], what: "password")
            let name = args.options["name"]
            let response = try runBlocking { try await client.signUp(email: email, password: password, name: name, redirectTo: redirectTo) }
            if response.hasSession {
                io.print("signed up and signed in as \(response.user?.description ?? email)")
            } else {
                io.print("signed up as \(email): verify the e-mail address (credvault insforge verify), then sign in")
            }
        case "signin":
            let email = try required(args, "email")
            let password = try input.secret(file: args.options["password-file"], what: "password")
            let response = try runBlocking { try await client.signIn(email: email, password: password) }
            io.print("signed in as \(response.user?.description ?? email)")
        case "verify":
            let email = try required(args, "email")
            if args.flags.contains("resend") {
                try runBlocking { try await client.resendVerificationEmail(email: email, redirectTo: redirectTo) }
                io.print("verification e-mail requested for \(email)")
            } else {
                let code = try input.secret(file: args.options["code-file"], what: "code")
                let response = try runBlocking { try await client.verifyEmail(email: email, code: code) }
                io.print("e-mail address verified; signed in as \(response.user?.description ?? email)")
            }
        case "reset":
            let email = try required(args, "email")
            if args.flags.contains("send") {
                try runBlocking { try await client.sendPasswordReset(email: email, redirectTo: redirectTo) }
                io.print("password reset e-mail requested for \(email)")
            } else {
                let code = try input.secret(file: args.options["code-file"], what: "code")
                let password = try input.secret(file: args.options["password-file"], what: "new password")
                try runBlocking {
                    let token = try await client.exchangeResetPasswordToken(email: email, code: code)
                    try await client.resetPassword(otp: token.token, newPassword: password)
                }
                io.print("password reset for \(email): sign in with the new password")
            }
        case "whoami":
            let user = try runBlocking { try await client.getCurrentUser() }
            if args.flags.contains("json") {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                io.write(try encoder.encode(user) + Data("\n".utf8))
            } else {
                io.print([user.id, user.email, user.name ?? "", user.emailVerified ? "verified" : "unverified"].joined(separator: "\t"))
            }
        default:  // signout
            let hadSession = try runBlocking { try await client.storedSession() != nil }
            try runBlocking { try await client.signOut() }
            io.print(hadSession ? "signed out" : "not signed in")
        }
        return ExitCode.success
    }

    private static func makeClient(_ args: ParsedArguments, url: URL, store: any TokenStorageBackend) throws -> InsForgeClient {
        guard let clientType = InsForgeClientType(rawValue: args.options["client-type"] ?? "desktop") else {
            throw UsageError("--client-type is desktop or server")
        }
        let anonKey = try args.options["anon-key-file"].map { try SecretInput.read(file: $0, what: "anon key") }
        let logger = try StderrLogHandler.logger(levelOption: args.options["log-level"])
        let configuration = InsForgeConfiguration(
            baseURL: url, clientType: clientType, anonKey: anonKey,
            session: SessionManager.Configuration(proactiveRefresh: false))
        let asynchronous = store
        do {
            return try runBlocking { try await InsForgeClient(configuration: configuration, store: asynchronous, logger: logger) }
        } catch let error as InsForgeError {
            throw UsageError(error.description)
        }
    }

    private static func required(_ args: ParsedArguments, _ option: String) throws -> String {
        guard let value = args.options[option], !value.isEmpty else { throw UsageError("--\(option) is required") }
        return value
    }

    /// Exit codes: not signed in 1, bad input 2, refused 11, unreachable or rate limited 12,
    /// the vault's own codes for storage failures, 3 for everything else.
    private static func exitCode(_ error: InsForgeError) -> Int32 {
        switch error {
        case .auth(.notSignedIn): ExitCode.notFound
        case .invalidInput: ExitCode.usage
        case .invalidCredentials, .emailNotVerified, .userNotFound, .emailAlreadyExists, .invalidCode: ExitCode.authFailed
        case .networkError, .rateLimited: ExitCode.unreachable
        case .auth(let auth): AuthCommand.exitCode(for: auth)
        case .backend: ExitCode.failure
        }
    }
}

/// Passwords and codes from files or stdin: a file holds one (minus one trailing newline);
/// stdin is read once and hands out its lines in order.
final class SecretInput {
    private let io: TerminalIO
    private var lines: [String]?

    init(io: TerminalIO) { self.io = io }

    /// The secret in `file`, or else the next line of stdin.
    func secret(file: String?, what: String) throws -> String {
        if let file { return try Self.read(file: file, what: what) }
        if lines == nil {
            lines = String(decoding: try io.readStdin(), as: UTF8.self).components(separatedBy: "\n")
                .map { $0.hasSuffix("\r") ? String($0.dropLast()) : $0 }
        }
        guard let line = lines?.first, !line.isEmpty else { throw UsageError("no \(what) on stdin (or give a file)") }
        lines?.removeFirst()
        return line
    }

    /// A file's text minus one trailing newline, checked like a passphrase file
    /// (`SecretReader.text`); empty is an error.
    static func read(file: String, what: String) throws -> String {
        try SecretReader.text(fromFile: file, what: what)
    }
}
