import Foundation
import CredentialVaultTestSupport
import Testing

/// git's credential protocol tells an absent field from an empty one: `username=` (a single
/// sign-on host's empty user name) and an empty password are stored and answered as they are,
/// while a request without a username stores nothing and asks for any account.
@Suite(.ownThread) final class GitCredentialEmptyFieldTests {
    let dir = TempDirectory()
    lazy var environment = CLIChild.environment(dir, ["CREDVAULT_BACKEND": "file"])

    lazy var helper: URL = {
        let link = dir.path("git-credential-credvault")
        try? FileManager.default.createSymbolicLink(at: link, withDestinationURL: BuiltProducts.credvault)
        return link
    }()

    func git(_ action: String, _ request: String) throws -> String {
        let outcome = try CLIChild.run([action], executable: helper, environment: environment, stdin: Data(request.utf8))
        #expect(outcome.status == 0, "\(action): \(outcome.stderr)")
        return String(decoding: outcome.stdout, as: UTF8.self)
    }

    @Test func anEmptyUsernameAndPasswordAreStoredAndAnsweredAsTheyAre() throws {
        _ = try git("store", "protocol=https\nhost=sso.example.com\nusername=\npassword=\n")
        #expect(try git("get", "protocol=https\nhost=sso.example.com\n") == "username=\npassword=\n")
        #expect(try git("get", "protocol=https\nhost=sso.example.com\nusername=\n") == "username=\npassword=\n")
        #expect(try git("get", "protocol=https\nhost=sso.example.com\nusername=alice\n").isEmpty, "the empty name is not any name")

        _ = try git("store", "protocol=https\nhost=sso.example.com\nusername=alice\npassword=pw\n")
        #expect(try git("get", "protocol=https\nhost=sso.example.com\nusername=alice\n") == "username=alice\npassword=pw\n")
        // Erasing the empty user name erases that credential only.
        _ = try git("erase", "protocol=https\nhost=sso.example.com\nusername=\n")
        #expect(try git("get", "protocol=https\nhost=sso.example.com\n") == "username=alice\npassword=pw\n")
        let listed = try CLIChild.run(["list"], environment: environment)
        #expect(String(decoding: listed.stdout, as: UTF8.self) == "git:https://sso.example.com\talice\n")
    }

    @Test func anAbsentUsernameStoresNothing() throws {
        _ = try git("store", "protocol=https\nhost=h.example.com\npassword=pw\n")
        #expect(try git("get", "protocol=https\nhost=h.example.com\n").isEmpty)
        #expect(try CLIChild.run(["list"], environment: environment).stdout.isEmpty)
    }
}
