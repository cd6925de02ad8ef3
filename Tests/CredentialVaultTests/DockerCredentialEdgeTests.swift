import Foundation
import CredentialVaultTestSupport
import Testing

/// `docker-credential-credvault` where docker's protocol says nothing, aligned with docker's own
/// helpers (docker-credential-helpers): the server URL is the same for `store`, `get` and
/// `erase` whatever white space surrounds it; `store`'s JSON is read as Go reads it (a key given
/// twice keeps its last value, keys match case-insensitively); erasing a registry that has no
/// credential succeeds, as docker's Secret Service helper does.
@Suite(.ownThread) final class DockerCredentialEdgeTests {
    let dir = TempDirectory()
    let secret = "tok-\(UUID().uuidString)"
    lazy var environment = CLIChild.environment(dir, ["CREDVAULT_BACKEND": "file"])

    lazy var helper: URL = {
        let link = dir.path("docker-credential-credvault")
        try? FileManager.default.createSymbolicLink(at: link, withDestinationURL: BuiltProducts.credvault)
        return link
    }()

    func docker(_ action: String, _ input: String) throws -> (status: Int32, out: String) {
        let outcome = try CLIChild.run([action], executable: helper, environment: environment, stdin: Data(input.utf8))
        #expect(!outcome.stderr.contains(secret))
        return (outcome.status, String(decoding: outcome.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func got(_ server: String) throws -> [String: String]? {
        let answer = try docker("get", server)
        guard answer.status == 0 else { return nil }
        return try JSONSerialization.jsonObject(with: Data(answer.out.utf8)) as? [String: String]
    }

    func listed() throws -> [String: String]? {
        try JSONSerialization.jsonObject(with: Data(try docker("list", "unused").out.utf8)) as? [String: String]
    }

    @Test func theServerURLIsTrimmedAlikeByStoreGetAndErase() throws {
        let padded = " \t https://r.example.com/v1/ \n\u{A0}"
        let stored = try docker("store", "{\"ServerURL\": \"\(padded.unicodeScalars.map { $0.escapedForJSON }.joined())\", \"Username\": \"u\", \"Secret\": \"\(secret)\"}")
        #expect(stored.status == 0, "\(stored.out)")
        #expect(try listed() == ["https://r.example.com/v1/": "u"], "stored under the trimmed URL")
        #expect(try got("https://r.example.com/v1/") == ["ServerURL": "https://r.example.com/v1/", "Username": "u", "Secret": secret])
        #expect(try got("\n  https://r.example.com/v1/\t") == ["ServerURL": "https://r.example.com/v1/", "Username": "u", "Secret": secret])
        let lookup = try CLIChild.run(["lookup", "docker:https://r.example.com/v1/", "u"], environment: environment)
        #expect(lookup.stdout == Data(secret.utf8))
        #expect(try docker("erase", "  https://r.example.com/v1/ ").status == 0)
        #expect(try listed() == [:], "erased through the same trimmed URL")
        // White space only is no URL, in store as in get.
        #expect(try docker("store", "{\"ServerURL\": \" \\t \", \"Username\": \"u\", \"Secret\": \"s\"}").out == "no credentials server URL")
    }

    @Test func aKeyGivenTwiceKeepsItsLastValueAndKeysMatchAsGoMatchesThem() throws {
        let stored = try docker("store", """
            {"ServerURL": "first.example.com", "Username": "first", "Secret": "first-secret",
             "ServerURL": "r.example.com", "username": "second", "SECRET": "x", "ſecret": "\(secret)", "Other": {"Secret": "nested"}}
            """)
        #expect(stored.status == 0, "\(stored.out)")
        #expect(try got("r.example.com") == ["ServerURL": "r.example.com", "Username": "second", "Secret": secret])
        #expect(try got("first.example.com") == nil, "the first ServerURL was replaced, not stored")
        // null leaves a field as it was; a field of another type is refused.
        #expect(try docker("store", "{\"ServerURL\": \"n.example.com\", \"Username\": \"u\", \"Secret\": \"s\", \"Username\": null}").status == 0)
        #expect(try got("n.example.com")?["Username"] == "u")
        let typed = try docker("store", "{\"ServerURL\": \"t.example.com\", \"Username\": \"u\", \"Secret\": \"s\", \"secret\": 1}")
        #expect(typed.status == 1 && typed.out.contains("not docker's credentials JSON"))
        #expect(try got("t.example.com") == nil)
    }

    @Test func inputNestedTooDeeplyIsRefusedNotACrash() throws {
        // 513 `[`: one level past the JSON decoder's own limit, where it trapped (SIGILL).
        for input in [String(repeating: "[", count: 513), "{\"Secret\": " + String(repeating: "[", count: 60_000)] {
            let stored = try docker("store", input)
            #expect(stored.status == 1 && stored.out.contains("not docker's credentials JSON"), "\(stored.status) \(stored.out)")
        }
    }

    /// The same depth in UTF-16, which the decoder also reads: a character whose bytes hold a
    /// quote (U+2200) hid the brackets after it from the nesting count, and 1 KiB on stdin
    /// killed the helper (SIGILL).
    @Test func inputNestedTooDeeplyInUTF16IsRefusedNotACrash() throws {
        let input = ("[\"\u{2200}\"," + String(repeating: "[", count: 512)).data(using: .utf16LittleEndian)!
        let outcome = try CLIChild.run(["store"], executable: helper, environment: environment, stdin: input)
        let said = String(decoding: outcome.stdout, as: UTF8.self)
        #expect(outcome.status == 1 && said.contains("not docker's credentials JSON"), "\(outcome.status) \(said)")
    }

    /// Input past the 1 MiB limit (more than a pipe holds: from a file) is refused in words
    /// that name it; the help names the helpers' default backend (auto), never file.
    @Test func tooLongInputIsNamedAndTheHelpNamesTheDefaultBackend() throws {
        let input = dir.path("large-input")
        #expect(FileManager.default.createFile(atPath: input.path, contents: Data(repeating: 0x20, count: (1 << 20) + 1)))
        let run = try CLIChild.run(["store"], executable: helper, environment: environment, stdinFile: input)
        let said = run.stdoutText + run.stderr
        #expect(run.status != 0)
        #expect(said.contains("the credentials JSON is longer than"), "\(said)")
        for command in [["--help"], ["git-credential", "--help"]] {
            let executable = command.count == 1 ? helper : BuiltProducts.credvault
            let help = String(decoding: try CLIChild.run(command, executable: executable, environment: environment).stdout, as: UTF8.self)
            #expect(help.contains("(default: auto, or $CREDVAULT_BACKEND)") && !help.contains("storage backend (default: file"), "\(command)")
        }
    }

    /// docker shows a helper's stdout line on failure and checks for exit code 1: a usage
    /// error (an unknown option) is reported that way too, not on stderr with exit code 2.
    @Test func aUsageErrorIsOneLineOnStdoutWithExitCode1() throws {
        let outcome = try CLIChild.run(["--bogus", "get"], executable: helper, environment: environment)
        #expect(outcome.status == 1)
        #expect(String(decoding: outcome.stdout, as: UTF8.self).contains("unknown option --bogus"))
        #expect(outcome.stderr.isEmpty, "\(outcome.stderr)")
    }

    @Test func erasingARegistryWithoutACredentialSucceeds() throws {
        #expect(try docker("store", "{\"ServerURL\": \"kept.example.com\", \"Username\": \"u\", \"Secret\": \"\(secret)\"}").status == 0)
        let erase = try docker("erase", "never-stored.example.com")
        #expect(erase.status == 0 && erase.out.isEmpty, "\(erase.out)")
        #expect(try listed() == ["kept.example.com": "u"], "nothing else erased")
        #expect(try docker("erase", "kept.example.com").status == 0)
        #expect(try docker("erase", "kept.example.com").status == 0, "erasing again: still nothing to report")
        // get still reports a registry it does not know with docker's message.
        let get = try docker("get", "kept.example.com")
        #expect(get.status == 1 && get.out == "credentials not found in native keychain")
        #expect(try docker("erase", " \n").out == "no credentials server URL")
    }
}

private extension Unicode.Scalar {
    /// This character inside a JSON string (`\uXXXX` for white space and controls).
    var escapedForJSON: String {
        value < 0x20 || properties.isWhitespace ? String(format: "\\u%04X", value) : String(self)
    }
}
