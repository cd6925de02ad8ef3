import Foundation
import CredentialVaultTestSupport
import Testing

/// The `credvault` executable, run as a user or a script would.
@Suite(.ownThread) final class CLITests {
    let dir = TempDirectory()

    /// Runs credvault with private XDG directories, feeding `stdin`.
    func credvault(_ arguments: [String], stdin: Data = Data(), environment: [String: String] = [:]) throws -> CLIChild.Outcome {
        try CLIChild.run(arguments, environment: CLIChild.environment(dir, environment), stdin: stdin)
    }

    @Test func storeAndLookupRoundTripExactBytesWithTheDeviceKey() throws {
        let secret = Data([0x68, 0x69, 0, 0xFF, 0x0A, 0x0A])
        #expect(try credvault(["store", "api.example.com", "alice"], stdin: secret).status == 0)
        let found = try credvault(["lookup", "api.example.com", "alice"])
        #expect(found.status == 0)
        #expect(found.stdout == secret, "exactly the stored bytes, trailing newlines included")
        #expect(try credvault(["store", "api.example.com", "empty"], stdin: Data()).status == 0)
        #expect(try credvault(["lookup", "api.example.com", "empty"]).stdout == Data())
        let info = String(decoding: try credvault(["info"]).stdout, as: UTF8.self)
        #expect(info.contains("unlocked with: device key"))
    }

    /// A service user's HOME names no directory (`/nonexistent`): the defaults under it are
    /// refused saying so, and nothing is created there (root could create it anywhere); a
    /// vault named explicitly is made as asked.
    @Test func aHomeThatDoesNotExistIsNeverCreatedForTheDefaults() throws {
        let home = dir.path("nonexistent").path
        let environment = CLIChild.environment(dir, ["HOME": home]).filter { !$0.key.hasPrefix("XDG_") }
        let outcome = try CLIChild.run(["store", "svc", "acct"], environment: environment, stdin: Data("v".utf8))
        #expect(outcome.status == 8)
        #expect(outcome.stderr.contains("under the home directory \(home) ($HOME), which does not exist"), "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home))
        let key = dir.path("key")
        #expect(try CLIChild.run(["keygen", key.path], environment: environment).status == 0)
        let named = dir.path("vaults/v.cvault")
        let explicit = try CLIChild.run(
            ["store", "svc", "acct", "--vault", named.path, "--key-file", key.path, "--portable"], environment: environment,
            stdin: Data("v".utf8))
        #expect(explicit.status == 0, "\(explicit.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home))
    }

    @Test func listPrintsTabSeparatedLinesAndJSON() throws {
        _ = try credvault(["store", "svc-b", "bob"], stdin: Data("1".utf8))
        // Whole milliseconds: the file keeps them, the output prints them.
        let before = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        _ = try credvault(["store", "svc-a", "alice", "--portable"], stdin: Data("2".utf8))
        let after = Date()
        _ = try credvault(["store", "svc-a", "verifier", "--ttl", "60"], stdin: Data("3".utf8))
        let list = try credvault(["list"])
        #expect(String(decoding: list.stdout, as: UTF8.self) == "svc-a\talice\nsvc-b\tbob\n")
        let json = try credvault(["list", "--json"])
        let items = try JSONSerialization.jsonObject(with: json.stdout) as? [[String: String]]
        #expect(items?.count == 2)
        #expect(items?.first?["accessibility"] == "portable")
        // The vault dates its records: ISO 8601 in UTC, to the millisecond.
        let created = try #require(items?.first?["created"])
        #expect(created.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(created)")
        let date = try Date(created, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        #expect(date >= before && date <= after, "\(created) is when it was stored")
        #expect(items?.first?["modified"] == created, "saved once: created is modified")
        #expect(try credvault(["lookup", "svc-a", "verifier", "--take"]).stdout == Data("3".utf8))
        #expect(try credvault(["lookup", "svc-a", "verifier"]).status == 1)
    }

    @Test func exitCodesAreStable() throws {
        #expect(try credvault(["lookup", "nothing", "here"]).status == 1)
        #expect(try credvault(["delete", "nothing", "here"]).status == 1)
        #expect(try credvault(["frobnicate"]).status == 2)
        #expect(try credvault(["store", "only-service"]).status == 2)
        let secretAsArgument = try credvault(["store", "svc", "acct", "hunter2"])
        #expect(secretAsArgument.status == 2, "a secret is never taken from the command line")
        #expect(!secretAsArgument.stderr.contains("hunter2") || secretAsArgument.stderr.contains("expected"))
        #expect(try credvault(["list", "--backend", "nope"]).status == 2)
    }

    @Test func passphraseFileEnvironmentVariableAndWrongPassphrase() throws {
        let vault = dir.path("vaults/p.cvault").path
        let good = dir.path("good-pass"), bad = dir.path("bad-pass")
        try Data("right horse\n".utf8).write(to: good)
        try Data("wrong horse\n".utf8).write(to: bad)
        chmod(good.path, 0o600)
        chmod(bad.path, 0o600)
        let create = try credvault(["init", "--vault", vault, "--passphrase-file", good.path, "--kdf", "insecure-testing-only"])
        #expect(create.status == 0, "\(create.stderr)")
        #expect(try credvault(["store", "s", "a", "--vault", vault, "--passphrase-file", good.path], stdin: Data("v".utf8)).status == 0)
        let viaEnv = try credvault(["lookup", "s", "a", "--vault", vault], environment: ["CREDVAULT_PASSPHRASE_FILE": good.path])
        #expect(viaEnv.stdout == Data("v".utf8))
        let wrong = try credvault(["lookup", "s", "a", "--vault", vault, "--passphrase-file", bad.path])
        #expect(wrong.status == 4)
        #expect(wrong.stderr.contains("wrong passphrase") && !wrong.stderr.contains("horse"))
        #expect(wrong.stderr.split(separator: "\n").count == 1, "one clear line")
        let noKey = try credvault(["lookup", "s", "a", "--vault", vault])
        #expect(noKey.status == 2 && noKey.stderr.contains("--passphrase-file"))
    }

    @Test func keyFilePasswdAndRotate() throws {
        let vault = dir.path("vaults/k.cvault").path
        let keyFile = dir.path("k.key").path, newKey = dir.path("new.key").path
        #expect(try credvault(["keygen", keyFile]).status == 0)
        #expect(try credvault(["keygen", keyFile]).status != 0, "never overwrites a key file")
        #expect(try credvault(["keygen", newKey]).status == 0)
        #expect(try credvault(["store", "s", "a", "--vault", vault, "--key-file", keyFile, "--portable"], stdin: Data("v".utf8)).status == 0)
        #expect(try credvault(["passwd", "--vault", vault, "--key-file", keyFile, "--new-key-file", newKey]).status == 0)
        #expect(try credvault(["lookup", "s", "a", "--vault", vault, "--key-file", keyFile]).status == 4)
        #expect(try credvault(["rotate", "--vault", vault, "--key-file", newKey]).status == 0)
        #expect(try credvault(["lookup", "s", "a", "--vault", vault, "--key-file", newKey]).stdout == Data("v".utf8))
    }

    @Test func everyCommandHasHelp() throws {
        let top = try credvault(["--help"])
        #expect(top.status == 0)
        let text = String(decoding: top.stdout, as: UTF8.self)
        let names = text.split(separator: "\n").filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }
            .compactMap { $0.split(separator: " ").first.map(String.init) }.filter { !$0.hasPrefix("--") }
        #expect(names.contains("store") && names.contains("lookup") && names.contains("list"))
        for name in names {
            let help = try credvault([name, "--help"])
            #expect(help.status == 0, "\(name) --help")
            #expect(String(decoding: help.stdout, as: UTF8.self).contains("usage: credvault \(name)"))
        }
    }
}
