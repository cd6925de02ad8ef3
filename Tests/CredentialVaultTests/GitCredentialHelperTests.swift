import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultCLI

#if canImport(Glibc)
import Glibc
#endif

/// `git-credential-credvault` (a link to the lean `credvault`) speaking git's credential helper
/// protocol, fed the way git feeds it, and fed what git never sends.
@Suite(.ownThread) final class GitCredentialHelperTests {
    let dir = TempDirectory()
    lazy var environment = CLIChild.environment(dir, ["CREDVAULT_BACKEND": "file"])
    let password = "pw-\(UUID().uuidString)"

    /// The helper under the name git runs it by.
    lazy var helper: URL = {
        let link = dir.path("git-credential-credvault")
        try? FileManager.default.createSymbolicLink(at: link, withDestinationURL: BuiltProducts.credvault)
        return link
    }()

    func git(_ action: String, _ request: String) throws -> CLIChild.Outcome {
        try CLIChild.run([action], executable: helper, environment: environment, stdin: Data(request.utf8))
    }

    func lookup(_ service: String, _ account: String) throws -> CLIChild.Outcome {
        try CLIChild.run(["lookup", service, account], environment: environment)
    }

    @Test func storeGetAndEraseRoundTripWithTheFieldsGitSends() throws {
        let stored = try git("store", """
            protocol=https
            host=git.example.com:8443
            username=alice
            password=\(password)
            password_expiry_utc=2000000000
            oauth_refresh_token=refresh-\(password)
            wwwauth[]=Basic realm="example"
            capability[]=authtype
            unknown-future-key=whatever

            """)
        #expect(stored.status == 0, "\(stored.stderr)")
        let answer = try git("get", "protocol=https\nhost=git.example.com:8443\n\n")
        #expect(answer.status == 0)
        #expect(String(decoding: answer.stdout, as: UTF8.self) == """
            username=alice
            password=\(password)
            password_expiry_utc=2000000000
            oauth_refresh_token=refresh-\(password)

            """)
        #expect(!answer.stderr.contains(password) && !stored.stderr.contains(password))
        // Another host, protocol or port: nothing, as git expects from a helper without one.
        for other in ["protocol=http\nhost=git.example.com:8443\n", "protocol=https\nhost=git.example.com\n", "protocol=https\nhost=other\n"] {
            let none = try git("get", other)
            #expect(none.status == 0 && none.stdout.isEmpty)
        }
        #expect(try git("erase", "protocol=https\nhost=git.example.com:8443\nusername=alice\n").status == 0)
        #expect(try git("get", "protocol=https\nhost=git.example.com:8443\n").stdout.isEmpty)
    }

    @Test func aPlainPasswordIsStoredAsItIsForLookupAndExec() throws {
        #expect(try git("store", "protocol=https\r\nhost=example.com\r\nusername=bob\r\npassword=\(password)\r\n\r\n").status == 0)
        #expect(try lookup("git:https://example.com", "bob").stdout == Data(password.utf8))
        // And the other way: a token stored with `credvault store` is what git gets.
        let stored = try CLIChild.run(["store", "git:https://example.com/team/repo.git", "ci"], environment: environment, stdin: Data("tok".utf8))
        #expect(stored.status == 0)
        let answer = try git("get", "protocol=https\nhost=example.com\npath=team/repo.git\n")
        #expect(String(decoding: answer.stdout, as: UTF8.self) == "username=ci\npassword=tok\n")
    }

    @Test func anExpiredPasswordIsNotAnswered() throws {
        #expect(try git("store", "protocol=https\nhost=h\nusername=amy\npassword=old\npassword_expiry_utc=1000\n").status == 0)
        #expect(try git("get", "protocol=https\nhost=h\n").stdout.isEmpty)
        #expect(try git("store", "protocol=https\nhost=h\nusername=bob\npassword=valid\n").status == 0)
        #expect(String(decoding: try git("get", "protocol=https\nhost=h\n").stdout, as: UTF8.self) == "username=bob\npassword=valid\n")
    }

    @Test func anUnchangedCredentialIsNotWrittenAgain() throws {
        // git stores after every authenticated request, also what the helper just answered.
        let request = "protocol=https\nhost=h\nusername=alice\npassword=\(password)\n"
        func modified() throws -> String? {
            let listed = try CLIChild.run(["list", "--json"], environment: environment)
            return (try JSONSerialization.jsonObject(with: listed.stdout) as? [[String: String]])?.first?["modified"]
        }
        #expect(try git("store", request).status == 0)
        let first = try #require(try modified())
        #expect(try git("store", request).status == 0)
        #expect(try modified() == first, "not rewritten")
        #expect(try git("store", "protocol=https\nhost=h\nusername=alice\npassword=new-\(password)\n").status == 0)
        #expect(try lookup("git:https://h", "alice").stdout == Data("new-\(password)".utf8))
    }

    @Test func withoutAUsernameTheFirstAccountAnswersAndAUsernameSelects() throws {
        for name in ["zed", "amy"] {
            #expect(try git("store", "protocol=https\nhost=h\nusername=\(name)\npassword=\(name)-pw\n").status == 0)
        }
        #expect(String(decoding: try git("get", "protocol=https\nhost=h\n").stdout, as: UTF8.self) == "username=amy\npassword=amy-pw\n")
        #expect(String(decoding: try git("get", "protocol=https\nhost=h\nusername=zed\n").stdout, as: UTF8.self) == "username=zed\npassword=zed-pw\n")
    }

    @Test func eraseRemovesOnlyTheRejectedPassword() throws {
        #expect(try git("store", "protocol=https\nhost=h\nusername=alice\npassword=\(password)\n").status == 0)
        // A rejected password that is no longer the stored one (another clone stored a new one).
        #expect(try git("erase", "protocol=https\nhost=h\nusername=alice\npassword=old-\(password)\n").status == 0)
        #expect(try lookup("git:https://h", "alice").status == 0)
        #expect(try git("erase", "protocol=https\nhost=h\nusername=alice\npassword=\(password)\n").status == 0)
        #expect(try lookup("git:https://h", "alice").status == 1)
    }

    @Test func incompleteRequestsChangeNothingAndAnswerNothing() throws {
        // git's own helpers ignore a store without protocol, host, username or password.
        for request in ["host=h\nusername=a\npassword=p\n", "protocol=https\nusername=a\npassword=p\n",
                        "protocol=https\nhost=h\npassword=p\n", "protocol=https\nhost=h\nusername=a\n", ""] {
            let outcome = try git("store", request)
            #expect(outcome.status == 0 && outcome.stdout.isEmpty, "\(outcome.stderr)")
            #expect(try git("get", request).stdout.isEmpty)
        }
        #expect(try CLIChild.run(["list"], environment: environment).stdout.isEmpty)
        // An action git may add later is ignored.
        let future = try git("frobnicate", "protocol=https\nhost=h\n")
        #expect(future.status == 0 && future.stdout.isEmpty && future.stderr.isEmpty)
    }

    @Test func hostileRequestsAreRefusedWithoutQuotingThem() throws {
        let overlong = "protocol=https\nhost=h\nusername=a\npassword=" + String(repeating: "x", count: 70_000) + "\n"
        let requests = [
            ("a NUL byte", "protocol=https\nhost=h\nusername=a\npassword=\(password)\u{0}x\n"),
            ("a line without =", "protocol=https\nhost=h\n\(password)\n"),
            ("an overlong request", overlong),
        ]
        for (what, request) in requests {
            let big = request.utf8.count > 60_000
            let outcome: (status: Int32, stdout: Data, stderr: String)
            if big {
                // More than a pipe holds: written while the helper reads.
                let child = try LiveChild(helper, ["store"], environment: environment)
                child.write(Data(request.utf8.prefix(60_000)))
                child.write(Data(request.utf8.dropFirst(60_000)))
                child.closeStdin()
                let status = child.wait()
                outcome = (LiveChild.exitCode(status) ?? -1, Data(), "")
            } else {
                let run = try git("store", request)
                outcome = (run.status, run.stdout, run.stderr)
            }
            #expect(outcome.status == 2, "\(what)")
            #expect(!outcome.stderr.contains(password), "\(what)")
        }
        #expect(try CLIChild.run(["list"], environment: environment).stdout.isEmpty, "nothing stored")
    }

    @Test func aStoredValueGitsProtocolCannotCarryIsNotAnswered() throws {
        // A newline would forge a further line of the answer (here: another username).
        let stored = try CLIChild.run(["store", "git:https://h", "alice"], environment: environment, stdin: Data("pw\nusername=mallory".utf8))
        #expect(stored.status == 0)
        let answer = try git("get", "protocol=https\nhost=h\n")
        #expect(answer.status == 3 && answer.stdout.isEmpty)
        #expect(!answer.stderr.contains("mallory"))
    }

    @Test func anAccountNameGitCouldNotHaveStoredNeitherForgesNorHidesTheOthers() throws {
        // Stored by another program under git's service: a name with a newline, first in name
        // order. It is not any account git asked for, so the next one answers, unforged.
        for (account, value) in [("a\npassword=forged", "x"), ("a\rpassword=forged", "x"), ("bob", password)] {
            let stored = try CLIChild.run(["store", "--", "git:https://h", account], environment: environment, stdin: Data(value.utf8))
            #expect(stored.status == 0, "\(stored.stderr)")
        }
        let answer = try git("get", "protocol=https\nhost=h\n")
        #expect(answer.status == 0, "\(answer.stderr)")
        #expect(String(decoding: answer.stdout, as: UTF8.self) == "username=bob\npassword=\(password)\n")
    }

    @Test func aClientThatKeepsStdinOpenIsAnsweredAtTheBlankLine() throws {
        #expect(try git("store", "protocol=https\nhost=h\nusername=alice\npassword=\(password)\n").status == 0)
        let child = try LiveChild(helper, ["get"], environment: environment)
        child.write(Data("protocol=https\nhost=h\n\n".utf8))
        #expect(child.nextLine() == "username=alice")
        #expect(child.nextLine() == "password=\(password)")
        #expect(LiveChild.exitCode(child.wait()) == 0)
    }

    @Test func theOptionsGitConfigPassesComeBeforeTheAction() throws {
        // `credential.helper = credvault --backend file --vault PATH`: git runs
        // `git-credential-credvault --backend file --vault PATH get`.
        let vault = dir.path("git.cvault").path
        let stored = try CLIChild.run(
            ["--backend", "file", "--vault", vault, "store"], executable: helper, environment: environment,
            stdin: Data("protocol=https\nhost=h\nusername=a\npassword=p\n".utf8))
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(FileManager.default.fileExists(atPath: vault))
        let answer = try CLIChild.run(["git-credential", "--vault", vault, "get"], environment: environment, stdin: Data("protocol=https\nhost=h\n".utf8))
        #expect(String(decoding: answer.stdout, as: UTF8.self) == "username=a\npassword=p\n")
    }

    @Test func requestsParseAsGitWritesThem() throws {
        var request = try GitCredentialRequest(parsing: Data("protocol=https\nhost=a\nhost=b\npath=x/y\nusername=u\npassword=p=q\npassword_expiry_utc=12x\n\nusername=after-the-end\n".utf8))
        defer { request.wipe() }
        #expect(request.service == "git:https://b/x/y")
        #expect(request.username == "u" && request.password == Data("p=q".utf8))
        #expect(request.passwordExpiry == nil, "not a number: dropped")
        expectThrows({ (error: UsageError) in error.message.contains("host is not UTF-8") }) {
            try GitCredentialRequest(parsing: Data(Array("host=".utf8) + [0xFF, 0x0A])).host
        }
    }
}
