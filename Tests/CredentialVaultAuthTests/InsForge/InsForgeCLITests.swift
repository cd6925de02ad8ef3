import CredentialVault
import CredentialVaultAuth
import Foundation
import CredentialVaultTestSupport
import Testing

extension InsForgeEndToEnd {
    /// `credvault insforge ...`, the built executable run as a user or a script would, against
    /// the test server, with the session in a passphrase-sealed vault.
    @Suite("credvault insforge", .ownThread) final class CLI {
        typealias Server = InsForgeTestServer
        let vault: TemporaryVault
        let passphraseFile: URL

        init() throws {
            vault = try TemporaryVault()
            passphraseFile = vault.directory.appendingPathComponent("passphrase")
            try Data((TemporaryVault.passphrase + "\n").utf8).write(to: passphraseFile)
            chmod(passphraseFile.path, 0o600)  // a passphrase file others can read is refused
        }

        struct Outcome {
            var status: Int32
            var stdout: String
            var stderr: String
        }

        /// Runs `credvault insforge ACTION --url ... --vault ... --passphrase-file ...`, with the
        /// test's home (the session is a device-only record: the library side must open it too).
        func insforge(_ server: Server, _ arguments: [String], stdin: String = "") async throws -> Outcome {
            let (status, stdout, stderr) = try await CLIProcess.run(
                ["insforge"] + arguments + [
                    "--url", server.base.absoluteString, "--vault", vault.url.path, "--passphrase-file", passphraseFile.path,
                ],
                stdin: Data(stdin.utf8))
            return Outcome(status: status, stdout: stdout, stderr: stderr)
        }

        /// The session the CLI stored, read through the library from the same vault.
        func storedSession(_ server: Server) async throws -> AuthSession? {
            try await server.client(store: try vault.open()).storedSession()
        }

        @Test("signup, whoami, signout: the session lives in the vault, readable by the library")
        func signUpWhoamiSignOut() async throws {
            let server = try await Server.fresh()
            let email = Server.email("cli")
            let signUp = try await insforge(server, ["signup", "--email", email, "--name", "Cli User"], stdin: Server.password + "\n")
            #expect(signUp.status == 0, "\(signUp.stderr)")
            #expect(signUp.stdout.contains("signed up and signed in") && signUp.stdout.contains(email))

            let session = try #require(try await storedSession(server))
            #expect(session.user?.email == email && session.refreshToken != nil)
            let library = try await server.client(store: try vault.open())
            #expect(try await library.getCurrentUser().email == email, "the CLI's session serves the library")

            let whoami = try await insforge(server, ["whoami"])
            #expect(whoami.status == 0)
            #expect(whoami.stdout == "\(try #require(session.user?.subject))\t\(email)\tCli User\tunverified\n")
            let json = try await insforge(server, ["whoami", "--json"])
            #expect(try JSONValue.parse(Data(json.stdout.utf8))["email"]?.stringValue == email)

            let signOut = try await insforge(server, ["signout"])
            #expect(signOut.status == 0 && signOut.stdout == "signed out\n")
            #expect(try await storedSession(server) == nil)
            let after = try await insforge(server, ["whoami"])
            #expect(after.status == 1 && after.stderr.contains("not signed in"))
            for outcome in [signUp, whoami, json, signOut, after] {
                #expect(!outcome.stdout.contains(Server.password) && !outcome.stderr.contains(Server.password))
                #expect(!outcome.stdout.contains(session.accessToken) && !outcome.stderr.contains(session.accessToken))
            }
        }

        @Test("signup needing verification, signin refused, verify with a code file, resend")
        func verification() async throws {
            let server = try await Server.fresh(["requireEmailVerification": true])
            let email = Server.email("cli")
            let passwordFile = vault.directory.appendingPathComponent("password")
            try Data((Server.password + "\n").utf8).write(to: passwordFile)
            chmod(passwordFile.path, 0o600)  // secret files are checked like passphrase files
            let signUp = try await insforge(server, ["signup", "--email", email, "--password-file", passwordFile.path])
            #expect(signUp.status == 0 && signUp.stdout.contains("verify the e-mail address"))
            #expect(try await storedSession(server) == nil)

            let refused = try await insforge(server, ["signin", "--email", email], stdin: Server.password)
            #expect(refused.status == 11 && refused.stderr.contains("not verified"))

            let codeFile = vault.directory.appendingPathComponent("code")
            let first = try await server.code(sentTo: email, type: "verify-email-code")
            try Data((first == "000000" ? "111111" : "000000").utf8).write(to: codeFile)
            chmod(codeFile.path, 0o600)
            let wrong = try await insforge(server, ["verify", "--email", email, "--code-file", codeFile.path])
            #expect(wrong.status == 11 && wrong.stderr.contains("wrong, expired or already used"))

            let resend = try await insforge(server, ["verify", "--email", email, "--resend"])
            #expect(resend.status == 0)
            let code = try await server.code(sentTo: email, type: "verify-email-code")
            let verify = try await insforge(server, ["verify", "--email", email], stdin: code + "\n")
            #expect(verify.status == 0 && verify.stdout.contains("verified"), "\(verify.stderr)")
            #expect(!verify.stdout.contains(code) && !verify.stderr.contains(code))
            #expect(try await insforge(server, ["whoami"]).stdout.hasSuffix("\tverified\n"))
            let signIn = try await insforge(server, ["signin", "--email", email, "--password-file", passwordFile.path])
            #expect(signIn.status == 0 && signIn.stdout.contains("signed in as"))
        }

        @Test("reset: send, then code and new password on stdin")
        func reset() async throws {
            let server = try await Server.fresh()
            let email = Server.email("cli")
            #expect(try await insforge(server, ["signup", "--email", email], stdin: Server.password).status == 0)
            let send = try await insforge(server, ["reset", "--email", email, "--send"])
            #expect(send.status == 0 && send.stdout.contains("password reset e-mail requested"), "\(send.status): \(send.stderr)")
            let code = try await server.code(sentTo: email, type: "reset-password-code")
            let newPassword = "cli-new-password-3"
            let missing = try await insforge(server, ["reset", "--email", email], stdin: code + "\n")
            #expect(missing.status == 2 && missing.stderr.contains("no new password on stdin"))
            let reset = try await insforge(server, ["reset", "--email", email], stdin: "\(code)\n\(newPassword)\n")
            #expect(reset.status == 0, "\(reset.stderr)")
            #expect(try await insforge(server, ["signin", "--email", email], stdin: Server.password).status == 11)
            #expect(try await insforge(server, ["signin", "--email", email], stdin: newPassword).status == 0)
        }

        @Test("whoami refreshes a refused access token and stores the new session in the vault")
        func whoamiRefreshes() async throws {
            let server = try await Server.fresh()
            let email = Server.email("cli")
            #expect(try await insforge(server, ["signin", "--email", email], stdin: Server.password).status == 11, "no such user yet")
            #expect(try await insforge(server, ["signup", "--email", email], stdin: Server.password).status == 0)
            let before = try #require(try await storedSession(server))
            try await server.expireAccessTokens()
            try await server.resetStats()
            let whoami = try await insforge(server, ["whoami"])
            #expect(whoami.status == 0 && whoami.stdout.contains(email), "\(whoami.stderr)")
            #expect(try await server.stats()["refresh"] == 1)
            let after = try #require(try await storedSession(server))
            #expect(after.accessToken != before.accessToken && after.refreshToken != before.refreshToken)
            try await server.revokeRefreshTokens()
            try await server.expireAccessTokens()
            let ended = try await insforge(server, ["whoami"])
            #expect(ended.status == 11 && ended.stderr.contains("sign in again"))
            #expect(try await storedSession(server) == nil, "a refused refresh token ends the stored session")
        }

        @Test("usage errors, secrets never as arguments, unreachable backend")
        func usageAndErrors() async throws {
            let server = try await Server.fresh()
            let email = Server.email("cli")
            let asArgument = try await insforge(server, ["signin", "--email", email, "hunter2-secret"])
            #expect(asArgument.status == 2, "a password is never taken from the command line")
            #expect(try await insforge(server, ["signin", "--email", email, "--password", "x"]).status == 2)
            #expect(try await insforge(server, ["signin", "--email", email]).status == 2, "no password on stdin")
            #expect(try await insforge(server, ["signin"], stdin: Server.password).status == 2)
            #expect(try await insforge(server, ["frobnicate"]).status == 2)
            #expect(try await insforge(server, ["signup", "--email", "not-an-address"], stdin: Server.password).status == 2)
            let offline = try await insforge(Server(base: URL(string: "http://127.0.0.1:9")!), ["signin", "--email", email], stdin: "pw-123456")
            #expect(offline.status == 12 && offline.stderr.contains("could not be reached"))
            let help = try await insforge(server, ["--help"])
            #expect(help.status == 0 && help.stdout.contains("usage: credvault insforge"))
        }
    }
}
