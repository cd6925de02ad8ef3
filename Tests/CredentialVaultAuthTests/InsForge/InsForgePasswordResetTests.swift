import CredentialVault
import CredentialVaultAuth
import Foundation
import CredentialVaultTestSupport
import Testing

extension InsForgeEndToEnd {
    /// Password reset by code (send, exchange, reset) and by link.
    @Suite("password reset", .ownThread) struct PasswordReset {
        typealias Server = InsForgeTestServer
        static let newPassword = "a-brand-new-password-2"

        @Test("by code: wrong code and token refused, policy enforced, new password works", arguments: ["spec", "backend"])
        func resetByCode(mode: String) async throws {
            let server = try await Server.fresh(["mode": .string(mode)])
            let client = try await server.client()
            let email = Server.email()
            try await client.signUp(email: email, password: Server.password)
            try await client.signOut()
            try await client.sendPasswordReset(email: email)
            try await client.sendPasswordReset(email: Server.email("nobody"))  // same answer: no enumeration
            let code = try await server.code(sentTo: email, type: "reset-password-code")
            let expected = mode == "spec" ? 401 : 400

            do {
                _ = try await client.exchangeResetPasswordToken(email: email, code: code == "123456" ? "654321" : "123456")
                Issue.record("a wrong reset code was accepted")
            } catch .invalidCode(let answer) {
                #expect(answer.statusCode == expected)
            } catch { Issue.record("unexpected \(error)") }
            await #expect(throws: InsForgeError.invalidInput("the reset code must be 6 digits")) {
                _ = try await client.exchangeResetPasswordToken(email: email, code: "12a456")
            }

            let before = try await server.now()
            let reset = try await client.exchangeResetPasswordToken(email: email, code: code)
            let after = try await server.now()
            let expiresAt = try #require(reset.expiresAt)
            // Issued between the two readings of the server's clock, for 24 h (README note 7).
            #expect(expiresAt >= before.addingTimeInterval(24 * 3600 - 0.001) && expiresAt <= after.addingTimeInterval(24 * 3600 + 0.001),
                    "\(before) ... \(after) + 24 h, got \(expiresAt)")
            #expect(!reset.description.contains(reset.token))

            do {
                try await client.resetPassword(otp: String(reset.token.reversed()), newPassword: Self.newPassword)
                Issue.record("a wrong reset token was accepted")
            } catch .invalidCode(let answer) {
                #expect(answer.statusCode == expected)
            } catch { Issue.record("unexpected \(error)") }
            do {
                try await client.resetPassword(otp: reset.token, newPassword: "abc")
                Issue.record("a password below the policy was accepted")
            } catch .backend(let answer) {
                #expect(answer.statusCode == 400, "a policy failure is not a wrong token")
            } catch { Issue.record("unexpected \(error)") }

            try await client.resetPassword(otp: reset.token, newPassword: Self.newPassword)
            let reused = await #expect(throws: InsForgeError.self, "the token is single use") {
                try await client.resetPassword(otp: reset.token, newPassword: Self.newPassword)
            }
            #expect(reused?.kind == "invalidCode", "\(String(describing: reused))")
            do {
                try await client.signIn(email: email, password: Server.password)
                Issue.record("the old password still works")
            } catch .invalidCredentials {
            } catch { Issue.record("unexpected \(error)") }
            #expect(try await client.signIn(email: email, password: Self.newPassword).user?.email == email)
        }

        @Test("by link: the link leads to the app's page with the token, which resets")
        func resetByLink() async throws {
            let server = try await Server.fresh(["resetPasswordMethod": "link"])
            let client = try await server.client()
            let email = Server.email()
            try await client.signUp(email: email, password: Server.password)
            let page = "https://app.example.com/reset-password"
            do {
                try await client.sendPasswordReset(email: email)
                Issue.record("a link reset without redirectTo was accepted")
            } catch .backend(let answer) {
                #expect(answer.statusCode == 400)
            } catch { Issue.record("unexpected \(error)") }
            try await client.sendPasswordReset(email: email, redirectTo: page)
            let link = try #require(try await server.lastEmail(to: email, type: "reset-password-link")["link"]?.stringValue)
            let click = try await server.fetch(try #require(URL(string: link)))
            let location = try #require(click.headers["location"].flatMap(URL.init(string:)))
            #expect(location.absoluteString.hasPrefix(page))
            #expect(FormEncodingProbe.value("insforge_status", in: location) == "ready")
            let token = try #require(FormEncodingProbe.value("token", in: location))
            try await client.resetPassword(otp: token, newPassword: Self.newPassword)
            #expect(try await client.signIn(email: email, password: Self.newPassword).user?.email == email)
        }
    }
}
