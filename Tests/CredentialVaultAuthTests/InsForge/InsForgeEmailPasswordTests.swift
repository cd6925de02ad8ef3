import Logging
import CredentialVault
import CredentialVaultAuth
import Foundation
import CredentialVaultTestSupport
import Testing

extension InsForgeEndToEnd {
    /// Sign-up, e-mail verification, sign-in, profile and sign-out, with each error the
    /// backend can answer. Tests taking a `mode` run against both sides of the spec/backend
    /// differences (specs/README.md).
    @Suite("e-mail and password", .ownThread) struct EmailPassword {
        typealias Server = InsForgeTestServer

        @Test("sign-up without verification signs in and stores the session", arguments: ["spec", "backend"])
        func signUpWithoutVerification(mode: String) async throws {
            let server = try await Server.fresh(["mode": .string(mode)])
            let store = InMemoryStore()
            let client = try await server.client(store: store)
            let email = Server.email()
            let response = try await client.signUp(email: email, password: Server.password, name: "Ada")
            #expect(response.hasSession && !response.needsEmailVerification && !response.requireEmailVerification)
            #expect(response.user?.email == email && response.user?.name == "Ada")
            let stored = try await #require(try store.load(client.configuration.sessionKey))
            let session = try #require(try await client.storedSession())
            #expect(session.accessToken == response.accessToken && session.refreshToken == response.refreshToken)
            #expect(session.refreshToken != nil, "client_type=desktop: the refresh token comes in the body")
            #expect(session.expiresAt != nil, "the expiry is read from the JWT")
            #expect(!stored.isEmpty)
            let user = try await client.getCurrentUser()
            #expect(user.email == email && user.providers == ["email"] && !user.emailVerified)
            let query = try await server.requests().first { $0["operation"]?.stringValue == "users" }?["query"]
            #expect(query?["client_type"]?.stringValue == "desktop")
        }

        @Test("sign-up with code verification: no session until the code is verified", arguments: ["spec", "backend"])
        func signUpWithCodeVerification(mode: String) async throws {
            let server = try await Server.fresh(["mode": .string(mode), "requireEmailVerification": true])
            let client = try await server.client()
            let email = Server.email()
            let response = try await client.signUp(email: email, password: Server.password)
            #expect(response.needsEmailVerification && !response.hasSession && response.refreshToken == nil)
            #expect((response.user != nil) == (mode == "spec"), "the backend omits the user (README note 5)")
            #expect(try await client.storedSession() == nil)

            do {
                try await client.signIn(email: email, password: Server.password)
                Issue.record("signed in without verification")
            } catch .emailNotVerified(let answer) {
                #expect(answer.statusCode == 403 && answer.message == "Email verification required")
                #expect(answer.nextActions?.contains("verify") == true)
            } catch { Issue.record("unexpected \(error)") }

            let code = try await server.code(sentTo: email, type: "verify-email-code")
            let wrong = code == "000000" ? "111111" : "000000"
            do {
                try await client.verifyEmail(email: email, code: wrong)
                Issue.record("a wrong code was accepted")
            } catch .invalidCode(let answer) {
                #expect(answer.statusCode == (mode == "spec" ? 401 : 400), "both forms of README note 1")
            } catch { Issue.record("unexpected \(error)") }

            try await server.resetStats()
            await #expect(throws: InsForgeError.invalidInput("the verification code must be 6 digits")) {
                try await client.verifyEmail(email: email, code: "12345")
            }
            #expect(try await server.stats()["verify"] == 0, "a malformed code is not sent")

            let verified = try await client.verifyEmail(email: email, code: code)
            #expect(verified.user?.emailVerified == true)
            #expect(try await client.storedSession()?.accessToken == verified.accessToken)
            #expect(try await client.getCurrentUser().emailVerified)
            let reused = await #expect(throws: InsForgeError.self, "a code works once") { try await client.verifyEmail(email: email, code: code) }
            #expect(reused?.kind == "invalidCode", "\(String(describing: reused))")
            #expect(try await client.signIn(email: email, password: Server.password).user?.email == email)
        }

        @Test("resending the verification e-mail replaces the code")
        func resendVerification() async throws {
            let server = try await Server.fresh(["requireEmailVerification": true])
            let client = try await server.client()
            let email = Server.email()
            try await client.signUp(email: email, password: Server.password)
            let first = try await server.lastEmail(to: email)["sentAt"]
            try await client.resendVerificationEmail(email: email)
            let second = try await server.lastEmail(to: email, type: "verify-email-code")
            #expect(try await server.stats()["sendVerification"] == 1)
            #expect(second["sentAt"] != nil && first != nil)
            try await client.resendVerificationEmail(email: Server.email("nobody"))  // no enumeration: same answer
            let code = try #require(second["code"]?.stringValue)
            #expect(try await client.verifyEmail(email: email, code: code).user?.emailVerified == true)
        }

        @Test("link verification is reported through needsEmailVerification; the link verifies")
        func signUpWithLinkVerification() async throws {
            let server = try await Server.fresh(["requireEmailVerification": true, "verifyEmailMethod": "link"])
            let client = try await server.client()
            let email = Server.email()
            let landing = "https://app.example.com/sign-in"
            let response = try await client.signUp(email: email, password: Server.password, redirectTo: landing)
            #expect(response.needsEmailVerification && !response.hasSession)
            await expectThrows({ (error: InsForgeError) in error.kind == "emailNotVerified" }) {
                try await client.signIn(email: email, password: Server.password)
            }
            let link = try #require(try await server.lastEmail(to: email, type: "verify-email-link")["link"]?.stringValue)
            let click = try await server.fetch(try #require(URL(string: link)))
            #expect(click.status == 302)
            let location = try #require(click.headers["location"])
            #expect(location.hasPrefix(landing) && location.contains("insforge_status=success"))
            #expect(try await client.signIn(email: email, password: Server.password).user?.emailVerified == true)
        }

        @Test("errors: emailAlreadyExists, invalidCredentials, invalid input, sign-ups disabled")
        func signUpAndSignInErrors() async throws {
            let server = try await Server.fresh()
            let client = try await server.client()
            let email = Server.email()
            try await client.signUp(email: email, password: Server.password)
            do {
                try await client.signUp(email: email, password: Server.password)
                Issue.record("a second account with the same e-mail")
            } catch .emailAlreadyExists(let answer) {
                #expect(answer.statusCode == 409)
            } catch { Issue.record("unexpected \(error)") }

            for (who, password) in [(email, "wrong-password-1"), (Server.email("nobody"), Server.password)] {
                do {
                    try await client.signIn(email: who, password: password)
                    Issue.record("signed in with wrong credentials")
                } catch .invalidCredentials(let answer) {
                    #expect(answer.statusCode == 401 && answer.error == "AUTH_UNAUTHORIZED")
                    #expect(!"\(InsForgeError.invalidCredentials(answer))".contains(password))
                } catch { Issue.record("unexpected \(error)") }
            }

            await #expect(throws: InsForgeError.invalidInput("not an e-mail address")) {
                try await client.signIn(email: "not an address", password: Server.password)
            }
            do {
                try await client.signUp(email: Server.email(), password: "abc")
                Issue.record("a password below the policy was accepted")
            } catch .backend(let answer) {
                #expect(answer.statusCode == 400 && answer.message?.contains("Password must") == true)
            } catch { Issue.record("unexpected \(error)") }

            try await server.configure(["disableSignup": true])
            do {
                try await client.signUp(email: Server.email(), password: Server.password)
                Issue.record("signed up while sign-ups are disabled")
            } catch .backend(let answer) {
                #expect(answer.statusCode == 403 && answer.error == "AUTH_SIGNUP_DISABLED")
            } catch { Issue.record("unexpected \(error)") }
        }

        @Test("errors: rateLimited with Retry-After, forced and after repeated failures")
        func rateLimited() async throws {
            let server = try await Server.fresh(["signInFailureLimit": 2])
            let client = try await server.client()
            let email = Server.email()
            try await client.signUp(email: email, password: Server.password)
            for _ in 0..<2 {
                await expectThrows({ (error: InsForgeError) in error.kind == "invalidCredentials" }) {
                    try await client.signIn(email: email, password: "nope-nope")
                }
            }
            do {
                try await client.signIn(email: email, password: Server.password)
                Issue.record("not rate limited after the failure limit")
            } catch .rateLimited(let after, let answer) {
                #expect(after.map { $0 > 0 && $0 <= 900 } == true)
                #expect(answer?.statusCode == 429)
            } catch { Issue.record("unexpected \(error)") }

            try await server.configure(["signInFailureLimit": 0, "forceRateLimit": ["users"]])
            do {
                try await client.signUp(email: Server.email(), password: Server.password)
                Issue.record("sign-up not rate limited")
            } catch .rateLimited(let after, _) {
                #expect(after == 60)
            } catch { Issue.record("unexpected \(error)") }
        }

        @Test("sign-up's rate-limited verification e-mail keeps the backend's nextActions")
        func deliveryFailureKeepsNextActions() async throws {
            let server = try await Server.fresh(["requireEmailVerification": true, "emailDeliveryFailure": 429])
            let client = try await server.client()
            do {
                try await client.signUp(email: Server.email(), password: Server.password)
                Issue.record("no error")
            } catch {
                guard case .rateLimited(_, let answer?) = error else { Issue.record("unexpected \(error)"); return }
                #expect(answer.error == "AUTH_VERIFICATION_EMAIL_DELIVERY_FAILED")
                #expect(error.nextActions?.contains("send-verification") == true)
            }
        }

        @Test("errors: networkError when the backend cannot be reached")
        func networkError() async throws {
            let client = try await InsForgeClient(
                configuration: InsForgeConfiguration(baseURL: URL(string: "http://127.0.0.1:9")!, requestTimeout: .seconds(5)),
                store: InMemoryStore(), logger: .credentialVaultSilent)
            do {
                try await client.signIn(email: Server.email(), password: Server.password)
                Issue.record("signed in without a backend")
            } catch .networkError(let why) {
                #expect(!why.isEmpty)
            } catch { Issue.record("unexpected \(error)") }
        }

        @Test("the anon key is sent on sign-up when the backend requires one (README note 6)")
        func anonKey() async throws {
            let server = try await Server.fresh(["anonKey": "anon_test_key_123"])
            await expectThrows({ (error: InsForgeError) in error.kind == "backend" }) {
                try await server.client().signUp(email: Server.email(), password: Server.password)
            }
            let response = try await server.client(anonKey: "anon_test_key_123").signUp(email: Server.email(), password: Server.password)
            #expect(response.hasSession)
        }

        @Test("getCurrentUser and setProfile; userNotFound once the user is gone")
        func profileAndCurrentUser() async throws {
            let server = try await Server.fresh()
            let client = try await server.client()
            let email = Server.email()
            try await client.signUp(email: email, password: Server.password, name: "Before")
            let profile = try await client.setProfile(["name": "After", "avatar_url": "https://example.com/a.png", "level": 7])
            #expect(profile.profile?["name"] == "After" && profile.profile?["level"] == 7)
            let user = try await client.getCurrentUser()
            #expect(user.name == "After" && user.profile?["avatar_url"] == "https://example.com/a.png")
            do {
                try await client.setProfile(["avatar_url": "not a url"])
                Issue.record("an invalid avatar_url was accepted")
            } catch .backend(let answer) {
                #expect(answer.statusCode == 400)
            } catch { Issue.record("unexpected \(error)") }

            try await server.deleteUser(email)
            do {
                _ = try await client.getCurrentUser()
                Issue.record("a deleted user is still current")
            } catch .userNotFound(let answer) {
                #expect(answer.statusCode == 401 && answer.error == "AUTH_USER_NOT_FOUND")
            } catch { Issue.record("unexpected \(error)") }
        }

        @Test("sign-out deletes the stored session, tells the backend, and publishes the state")
        func signOutClearsStorage() async throws {
            let server = try await Server.fresh()
            let store = InMemoryStore()
            let client = try await server.client(store: store)
            var states = client.states().makeAsyncIterator()
            #expect(await states.next() == .unauthenticated(.neverSignedIn))
            let email = Server.email()
            try await client.signUp(email: email, password: Server.password)
            #expect(await states.next() == .authenticated(SessionSummary(try #require(try await client.storedSession()))))
            await #expect(try store.load(client.configuration.sessionKey) != nil)

            try await server.resetStats()
            try await client.signOut()
            #expect(await states.next() == .unauthenticated(.signedOut))
            await #expect(try store.load(client.configuration.sessionKey) == nil)
            await #expect(try store.listKeys().isEmpty)
            #expect(try await client.storedSession() == nil)
            #expect(try await server.stats()["logout"] == 1)
            let logout = try await server.requests().first { $0["operation"]?.stringValue == "logout" }
            #expect(logout?["hasAuthorization"] == true && logout?["query"]?["client_type"] == "desktop")
            await #expect(throws: InsForgeError.auth(.notSignedIn)) { try await client.getCurrentUser() }
            await #expect(throws: InsForgeError.auth(.notSignedIn)) { try await client.getAccessToken() }
            try await client.signOut()  // signed out already: nothing to do
            #expect(try await server.stats()["logout"] == 1)
        }
    }
}
