import Logging
import CredentialVault
import CredentialVaultAuth
import Foundation
import Synchronization
import CredentialVaultTestSupport
import Testing

extension InsForgeEndToEnd {
    /// Logging through the shared logger: every flow at `.trace`, and not one secret in it.
    @Suite("logging", .ownThread) struct Logging {
        typealias Server = InsForgeTestServer

        @Test("no password, code, token or verifier reaches the log, at any level")
        func noSecretsInLogs() async throws {
            let server = try await Server.fresh(["requireEmailVerification": true])
            let capture = LogCapture()
            let client = try await server.client(logger: capture.logger(level: .trace))
            var secrets: [String] = [Server.password]
            let email = Server.email()
            try await client.signUp(email: email, password: Server.password)
            await expectThrows({ (error: InsForgeError) in error.kind == "invalidCredentials" }) {
                try await client.signIn(email: email, password: "wrong-password-9")
            }
            secrets.append("wrong-password-9")
            let code = try await server.code(sentTo: email, type: "verify-email-code")
            secrets.append(code)
            await expectThrows({ (error: InsForgeError) in error.kind == "invalidCode" }) {
                try await client.verifyEmail(email: email, code: code == "000000" ? "999999" : "000000")
            }
            let verified = try await client.verifyEmail(email: email, code: code)
            secrets += [verified.accessToken, try #require(verified.refreshToken)]
            let refreshed = try await client.getAccessToken(forceRefresh: true)
            secrets += [refreshed, try #require(try await client.storedSession()?.refreshToken)]
            _ = try await client.setProfile(["name": "Logged"])

            try await client.sendPasswordReset(email: email)
            let resetCode = try await server.code(sentTo: email, type: "reset-password-code")
            let reset = try await client.exchangeResetPasswordToken(email: email, code: resetCode)
            secrets += [resetCode, reset.token, "new-password-for-logs-1"]
            try await client.resetPassword(otp: reset.token, newPassword: "new-password-for-logs-1")

            let browser = FollowingBrowser(deliver: false)
            let request = try await client.beginOAuth(provider: .github, redirectTo: "com.example.app:/cb")
            let redirect = try await browser.run(request.url)
            secrets += [request.state, try #require(FormEncodingProbe.value("insforge_code", in: redirect))]
            let oauth = try await client.handleRedirect(url: redirect)
            secrets.append(oauth.accessToken)
            try await client.signOut()

            let logged = capture.entries
            #expect(logged.contains { $0.level == .trace }, "trace records were written")
            #expect(logged.contains { $0.message.contains("/api/auth/refresh") })
            #expect(logged.count > 20)
            for record in logged {
                for secret in secrets where record.text.contains(secret) {
                    Issue.record("a secret reached the log at \(record.level): \(record.metadata["category"] ?? "")")
                }
            }
        }

        @Test("descriptions and errors never show tokens")
        func descriptionsAreRedacted() async throws {
            let server = try await Server.fresh()
            let client = try await server.client()
            let email = Server.email()
            let signUp = try await client.signUp(email: email, password: Server.password)
            let session = try #require(try await client.storedSession())
            let signIn = try await client.signIn(email: email, password: Server.password)
            for text in ["\(signUp)", String(reflecting: signUp), "\(signIn)", String(reflecting: signIn), "\(session)"] {
                for token in [signUp.accessToken, signUp.refreshToken, signIn.accessToken, signIn.refreshToken].compactMap({ $0 }) {
                    #expect(!text.contains(token))
                }
            }
            do {
                try await client.signIn(email: email, password: "hunter2-wrong")
            } catch {
                #expect(!error.description.contains("hunter2"))
                #expect(error.description.contains("invalid e-mail or password"))
            }
        }
    }
}

/// Redaction of InsForge's wire names (needs no server).
@Suite("InsForge redaction", .ownThread) struct InsForgeRedaction {
    @Test("InsForge's camelCase JSON members are redacted like the OAuth ones")
    func camelCaseMembersAreRedacted() {
        let body = #"{"email":"a@example.com","newPassword":"pw-one-1","refreshToken":"rt-2","accessToken":"at-3","csrfToken":"c-4","otp":"123456"}"#
        let redacted = Redactor.redact(body)
        for secret in ["pw-one-1", "rt-2", "at-3", "c-4", "123456"] { #expect(!redacted.contains(secret)) }
        #expect(redacted.contains("a@example.com"))
    }
}
