import Foundation
import CredentialVaultTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Real `git` cloning over HTTP from `git http-backend` behind Basic authentication on
/// 127.0.0.1 (Tests/Servers/git-http/server.py), with `credential.helper credvault` set the way
/// docs/CLI.md says: the first clone prompts (GIT_ASKPASS answers) and stores, the second uses
/// the stored credential without prompting, a rejected one is erased, and the next prompt
/// stores the new one.
@Suite(.ownThread) final class GitCloneTests {
    let dir = TempDirectory()
    let password = "pw-\(UUID().uuidString)"

    static let serverScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Servers/git-http/server.py")

    /// HOME, the vault and git's configuration are the test's own; PATH starts with the
    /// directory holding `git-credential-credvault`, a link to the lean credvault.
    var environment: [String: String] {
        CLIChild.environment(dir, [
            "PATH": "\(dir.path("bin").path):/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": dir.path("askpass").path, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
        ])
    }

    /// Runs git (at most 60 s); its exit status and stderr.
    @discardableResult
    func git(_ arguments: [String], in directory: URL? = nil) throws -> (status: Int32, stderr: String) {
        let ran = try CLIChild.run(
            arguments, executable: URL(fileURLWithPath: "/usr/bin/git"), environment: environment, directory: directory ?? dir.url, timeout: 60)
        return (ran.status, ran.stderr)
    }

    func write(_ text: String, to name: String, mode: Int = 0o600) throws {
        try Data(text.utf8).write(to: dir.path(name))
        chmod(dir.path(name).path, mode_t(mode))
    }

    func lines(_ name: String) -> [String] {
        ((try? String(contentsOf: dir.path(name), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test
    func cloneStoresReusesAndErasesTheCredential() throws {
        // A repository with one commit, served bare.
        let work = dir.path("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        try #require(git(["init", "-q", work.path]).status == 0)
        try Data("hello\n".utf8).write(to: work.appendingPathComponent("README"))
        try #require(git(["add", "README"], in: work).status == 0)
        try #require(git(["commit", "-qm", "first"], in: work).status == 0)
        try FileManager.default.createDirectory(at: dir.path("srv"), withIntermediateDirectories: true)
        try #require(git(["clone", "-q", "--bare", work.path, dir.path("srv/repo.git").path]).status == 0)

        // The helper as installed, and the configuration the README gives.
        try FileManager.default.createDirectory(at: dir.path("bin"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: dir.path("bin/git-credential-credvault"), withDestinationURL: BuiltProducts.credvault)
        try #require(git(["config", "--global", "credential.helper", "credvault --backend file"]).status == 0)
        // The prompt: logs each question; answers alice and the password in `answer`, or fails
        // when `answer` is missing.
        try write("""
            #!/bin/sh
            echo "$1" >>"\(dir.path("prompts").path)"
            [ -f "\(dir.path("answer").path)" ] || exit 1
            case "$1" in Username*) echo alice ;; *) cat "\(dir.path("answer").path)" ;; esac

            """, to: "askpass", mode: 0o700)
        try write(password, to: "server-password")
        try write(password, to: "answer")

        let server = try LiveChild(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [Self.serverScript.path, dir.path("srv").path, "alice", dir.path("server-password").path, dir.path("server.log").path],
            environment: environment)
        let port = try #require(server.nextLine(within: 30)?.split(separator: "=").last.flatMap { Int($0) })
        defer { server.closeStdin() }
        let url = "http://127.0.0.1:\(port)/repo.git"
        let service = "git:http://127.0.0.1:\(port)"

        // 1. Prompted, then stored.
        let first = try git(["clone", "-q", url, dir.path("c1").path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(lines("prompts").count == 2, "username and password were asked: \(lines("prompts"))")
        let stored = try CLIChild.run(["lookup", service, "alice"], environment: environment)
        #expect(stored.status == 0 && stored.stdout == Data(password.utf8), "\(stored.stderr)")

        // 2. No prompt (it would fail): the stored credential is used.
        try FileManager.default.removeItem(at: dir.path("answer"))
        let second = try git(["clone", "-q", url, dir.path("c2").path])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(lines("prompts").count == 2, "not asked again")
        #expect(FileManager.default.fileExists(atPath: dir.path("c2/README").path))

        // 3. The server's password changes: the stored one is rejected and erased.
        let newPassword = "new-\(password)"
        try write(newPassword, to: "server-password")
        let third = try git(["clone", "-q", url, dir.path("c3").path])
        #expect(third.status != 0)
        #expect(lines("server.log").last == "alice rejected")
        #expect(try CLIChild.run(["lookup", service, "alice"], environment: environment).status == 1, "the rejected credential is erased")

        // 4. The next clone prompts again and stores the new password.
        try write(newPassword, to: "answer")
        let fourth = try git(["clone", "-q", url, dir.path("c4").path])
        #expect(fourth.status == 0, "\(fourth.stderr)")
        #expect(try CLIChild.run(["lookup", service, "alice"], environment: environment).stdout == Data(newPassword.utf8))
        for outcome in [first, second, third, fourth] {
            #expect(!outcome.stderr.contains(password), "no secret on git's stderr")
        }
    }
}
