import Foundation
import CredentialVaultTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `docker-credential-credvault` (a link to the lean `credvault`) driven the way docker's CLI
/// drives a helper (docker-credential-helpers' client package): the action as the only
/// argument, the input on stdin (JSON for `store`, the bare server URL for `get` and `erase`,
/// "unused" for `list`), the answer or the error message read from stdout, trimmed, and the
/// exit status checked; stderr passed through to the user.
@Suite(.ownThread) final class DockerCredentialHelperTests {
    let dir = TempDirectory()
    let secret = "tok-\(UUID().uuidString)"

    /// The helper under the name docker runs it by.
    lazy var helper: URL = {
        let link = dir.path("docker-credential-credvault")
        try? FileManager.default.createSymbolicLink(at: link, withDestinationURL: BuiltProducts.credvault)
        return link
    }()

    /// No `--backend` and no $CREDVAULT_BACKEND, as docker runs it: `auto`, which finds no
    /// session bus here and uses the sealed file.
    lazy var environment = CLIChild.environment(dir)

    /// What docker's client gets: the exit status and stdout, trimmed as it trims it.
    func docker(_ action: String, _ input: String) throws -> (status: Int32, out: String, stderr: String) {
        let outcome = try CLIChild.run([action], executable: helper, environment: environment, stdin: Data(input.utf8))
        return (outcome.status, String(decoding: outcome.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), outcome.stderr)
    }

    /// `store`'s input as Go's json.Encoder writes it (a trailing newline).
    func credentials(_ server: String, _ user: String, _ secret: String) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: ["ServerURL": server, "Username": user, "Secret": secret]), as: UTF8.self) + "\n"
    }

    func decoded(_ json: String) throws -> [String: String] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])
    }

    @Test func storeGetListEraseAsDockerCallsThem() throws {
        let stored = try docker("store", try credentials("https://index.docker.io/v1/", "alice", secret))
        #expect(stored.status == 0 && stored.out.isEmpty, "\(stored.out) \(stored.stderr)")
        #expect(try docker("store", try credentials("ghcr.io", "<token>", "identity-\(secret)")).status == 0)

        let got = try docker("get", "https://index.docker.io/v1/")
        #expect(got.status == 0)
        #expect(try decoded(got.out) == ["ServerURL": "https://index.docker.io/v1/", "Username": "alice", "Secret": secret])
        #expect(try decoded(try docker("get", "ghcr.io\n").out)["Secret"] == "identity-\(secret)")

        let listed = try docker("list", "unused")
        #expect(listed.status == 0)
        #expect(try decoded(listed.out) == ["https://index.docker.io/v1/": "alice", "ghcr.io": "<token>"], "names only")
        #expect(!listed.out.contains(secret))

        #expect(try docker("erase", "ghcr.io").status == 0)
        let gone = try docker("get", "ghcr.io")
        #expect(gone.status == 1 && gone.out == "credentials not found in native keychain")
        #expect(try decoded(try docker("list", "unused").out) == ["https://index.docker.io/v1/": "alice"])
        for outcome in [stored, got, listed, gone] { #expect(!outcome.stderr.contains(secret)) }
    }

    @Test func aMissingCredentialGetsTheDocumentedMessages() throws {
        let get = try docker("get", "registry.example.com")
        #expect(get.status == 1 && get.out == "credentials not found in native keychain")
        let erase = try docker("erase", "registry.example.com")
        #expect(erase.status == 0 && erase.out.isEmpty, "nothing to erase is not an error, as in docker's Secret Service helper")
        #expect(try docker("get", "  \n").out == "no credentials server URL")
        #expect(try docker("store", try credentials("", "alice", secret)).out == "no credentials server URL")
        let noUser = try docker("store", try credentials("r.example.com", "", secret))
        #expect(noUser.status == 1 && noUser.out == "no credentials username")
        #expect(try docker("store", "{\"ServerURL\": \"r.example.com\", \"Secret\": \"\(secret)\"}").out == "no credentials username")
        #expect(try docker("store", "{\"Username\": \"u\", \"Secret\": \"\(secret)\"}").out == "no credentials server URL")
        // An empty store lists an empty map.
        #expect(try docker("list", "unused").out == "{}")
    }

    @Test func storeReplacesTheRegistrysCredentialAndKeepsTheOthers() throws {
        #expect(try docker("store", try credentials("r.example.com", "old", "old-\(secret)")).status == 0)
        #expect(try docker("store", try credentials("r.example.com", "new", secret)).status == 0)
        #expect(try docker("store", try credentials("r.example.com/other", "x", "x")).status == 0)
        #expect(try decoded(try docker("get", "r.example.com").out) == ["ServerURL": "r.example.com", "Username": "new", "Secret": secret])
        #expect(try decoded(try docker("list", "").out) == ["r.example.com": "new", "r.example.com/other": "x"])
        // Kept under docker:SERVERURL / USERNAME: the same credential for credvault lookup.
        let lookup = try CLIChild.run(["lookup", "docker:r.example.com", "new"], environment: environment)
        #expect(lookup.stdout == Data(secret.utf8))
    }

    @Test func badInputIsOneLineOnStdoutWithoutTheSecret() throws {
        for input in ["{\"ServerURL\": \"r\", \"Username\": \"u\", \"Secret\": \"\(secret)\"", "\(secret)", "[\"\(secret)\"]",
                      "{\"ServerURL\": 1, \"Username\": \"u\", \"Secret\": \"\(secret)\"}"] {
            let outcome = try docker("store", input)
            #expect(outcome.status == 1)
            #expect(!outcome.out.isEmpty && !outcome.out.contains("\n") && !outcome.out.contains(secret), "\(outcome.out)")
            #expect(!outcome.stderr.contains(secret))
        }
        let unknown = try docker("frobnicate", "")
        #expect(unknown.status == 1 && unknown.out == "Unknown credential action `frobnicate`")
        #expect(try docker("version", "").status == 0)
        #expect(try docker("list", "unused").out == "{}", "nothing was stored")
    }

    @Test func aSecretThatIsNotTextIsRefusedNotMangled() throws {
        let stored = try CLIChild.run(["store", "docker:bin.example.com", "u"], environment: environment, stdin: Data([0xFF, 0xFE, 0x00]))
        #expect(stored.status == 0)
        let got = try docker("get", "bin.example.com")
        #expect(got.status == 1 && got.out.contains("not UTF-8"))
    }

    @Test func theBackendIsChosenByTheEnvironment() throws {
        // $CREDVAULT_BACKEND=memory: nothing outlives the helper process, so `get` finds nothing
        // that the file backend has.
        #expect(try docker("store", try credentials("r.example.com", "u", secret)).status == 0)
        environment["CREDVAULT_BACKEND"] = "memory"
        #expect(try docker("get", "r.example.com").out == "credentials not found in native keychain")
        environment["CREDVAULT_BACKEND"] = "file"
        #expect(try decoded(try docker("get", "r.example.com").out)["Secret"] == secret)
        environment["CREDVAULT_BACKEND"] = "no-such-backend"
        let unknown = try docker("get", "r.example.com")
        #expect(unknown.status == 1 && unknown.out.contains("unknown backend"))
    }
}
