import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// Malformed command lines and unusable files given to `credvault`: each gets its documented
/// exit code and a one-line message saying what to do (the CLI rows of the catalogue in
/// docs/SECURITY-EVIDENCE.md).
@Suite(.ownThread) final class CLIBadInputTests {
    let dir = TempDirectory()

    private func credvault(_ arguments: [String], stdin: Data = Data(), state: String = "state") throws -> CLIChild.Outcome {
        try CLIChild.run(arguments, environment: CLIChild.environment(dir, ["XDG_STATE_HOME": dir.path(state).path]), stdin: stdin)
    }

    private func file(_ name: String, _ bytes: Data, mode: Int = 0o600) -> String {
        let url = dir.path(name)
        _ = FileManager.default.createFile(atPath: url.path, contents: bytes, attributes: [.posixPermissions: mode])
        return url.path
    }

    private func expect(
        _ arguments: [String], exit status: Int32, saying phrase: String, stdin: Data = Data(), state: String = "state",
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let outcome = try credvault(arguments, stdin: stdin, state: state)
        #expect(outcome.status == status, "credvault \(arguments.joined(separator: " ")): \(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.stderr.contains(phrase), "credvault \(arguments.joined(separator: " ")): \(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.stderr.split(separator: "\n").count <= 1, "one line", sourceLocation: sourceLocation)
        print("catalogue: credvault \(arguments.joined(separator: " ")) -> \(outcome.status): \(outcome.stderr.trimmingCharacters(in: .newlines))")
    }

    @Test func malformedCommandLinesAreUsageErrors() throws {
        let pass = file("pass", Data("a passphrase".utf8))
        try expect(["frobnicate"], exit: 2, saying: "unknown command 'frobnicate'")
        try expect(["list", "--frob"], exit: 2, saying: "unknown option --frob")
        try expect(["store", "svc", "acct", "--password=hunter2"], exit: 2, saying: "unknown option --password")
        try expect(["list", "--vault"], exit: 2, saying: "--vault needs a value")
        try expect(["list", "--json=yes"], exit: 2, saying: "--json takes no value")
        try expect(["store", "svc"], exit: 2, saying: "expected SERVICE ACCOUNT")
        try expect(["store", "svc", "acct", "the-secret-as-an-argument"], exit: 2, saying: "expected SERVICE ACCOUNT")
        try expect(["list", "--passphrase-file", pass, "--device"], exit: 2, saying: "give one of")
        try expect(["store", "svc", "acct", "--ttl", "0"], exit: 2, saying: "--ttl takes a positive number")
        try expect(["store", "svc", "acct", "--ttl", "soon"], exit: 2, saying: "--ttl takes a positive number")
        try expect(["init", "--passphrase-file", pass, "--kdf", "weak"], exit: 2, saying: "--kdf is interactive, moderate or sensitive")
        try expect(["list", "--backend", "cloud"], exit: 2, saying: "unknown backend 'cloud'")
        #expect(try credvault(["store", "svc", "acct", "--ttl", "0"]).stderr.contains("hunter2") == false)
    }

    /// A vault path that is a dangling link, a loose file or in an unsearchable directory is
    /// reported by every command, never taken for "no vault yet" (an empty `list`, "not found",
    /// `info` saying the first store would create it). At 59df243+ the CLI asked
    /// `FileManager.fileExists`, which follows links and says false on a permission error.
    @Test func aVaultThatCannotBeOpenedIsNeverNoVault() throws {
        let dangling = dir.path("v1/vault.cvault").path
        try FileManager.default.createDirectory(atPath: dir.path("v1").path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: dir.path("v1/elsewhere").path)
        for command in [["list"], ["lookup", "s", "a"], ["delete", "s", "a"], ["info"]] {
            try expect(command + ["--vault", dangling], exit: 2, saying: "is a symbolic link")
        }
        try FileManager.default.createDirectory(atPath: dir.path("v2").path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let loose = file("v2/vault.cvault", Data("not yet a vault".utf8), mode: 0o644)
        for command in [["list"], ["info"], ["passwd", "--new-passphrase-file", loose]] {
            let outcome = try credvault(command + ["--vault", loose])
            #expect(outcome.status != 0 && !outcome.stderr.isEmpty, "\(command): \(outcome.status) \(outcome.stderr)")
            #expect(!outcome.stderr.contains("no vault"), "\(command): \(outcome.stderr)")
        }
    }

    @Test func unusableSecretsAndKeysAreUsageErrors() throws {
        try expect(["init", "--passphrase-file", dir.path("missing").path], exit: 2, saying: "cannot read the passphrase file")
        try expect(["init", "--passphrase-file", file("empty", Data("\n".utf8))], exit: 2, saying: "is empty")
        try expect(["init", "--passphrase-file", file("huge", Data(count: 65537))], exit: 2, saying: "is larger than 65536 bytes")
        let short = file("short-key", Data(count: 8))
        try expect(["init", "--key-file", short, "--vault", dir.path("k/v.cvault").path], exit: 2, saying: "a key file holds 32 bytes")
        let loose = file("loose-key", Data(count: 32), mode: 0o644)
        try expect(["init", "--key-file", loose, "--vault", dir.path("l/v.cvault").path], exit: 9, saying: "chmod 600")
    }

    @Test func unusableVaultsGetTheirOwnExitCodes() throws {
        let pass = file("pass", Data("right".utf8)), wrong = file("wrong", Data("wrong".utf8))
        let vault = dir.path("v/v.cvault").path
        #expect(try credvault(["init", "--passphrase-file", pass, "--kdf", "insecure-testing-only", "--vault", vault]).status == 0)
        #expect(try credvault(["store", "s", "a", "--passphrase-file", pass, "--vault", vault], stdin: Data("x".utf8)).status == 0)
        try expect(["lookup", "s", "missing", "--passphrase-file", pass, "--vault", vault], exit: 1, saying: "no credential s / missing")
        try expect(["lookup", "s", "a", "--passphrase-file", wrong, "--vault", vault], exit: 4, saying: "wrong passphrase")
        try expect(["lookup", "s", "a", "--vault", vault], exit: 2, saying: "is unlocked with a passphrase")
        let intact = try TestVault.bytes(URL(fileURLWithPath: vault))
        var flipped = intact
        flipped[flipped.count - 3] ^= 0x10
        try TestVault.write(flipped, to: URL(fileURLWithPath: vault))
        try expect(["lookup", "s", "a", "--passphrase-file", pass, "--vault", vault], exit: 5, saying: "failed authentication")
        try TestVault.write(Array("{\"not\": \"a vault\"}".utf8), to: URL(fileURLWithPath: vault))
        try expect(["lookup", "s", "a", "--passphrase-file", pass, "--vault", vault], exit: 5, saying: "not a CredentialVault file")
        var future = intact
        future[8] = 9
        try TestVault.write(future, to: URL(fileURLWithPath: vault))
        try expect(["lookup", "s", "a", "--passphrase-file", pass, "--vault", vault], exit: 3, saying: "newer than this library")
        try TestVault.write(intact, to: URL(fileURLWithPath: vault))
        chmod(vault, 0o644)
        try expect(["lookup", "s", "a", "--passphrase-file", pass, "--vault", vault], exit: 9, saying: "chmod 600")
        chmod(vault, 0o600)
        // A device-key vault read with another host secret: another machine.
        let device = dir.path("d/v.cvault").path
        #expect(try credvault(["store", "s", "a", "--vault", device], stdin: Data("x".utf8)).status == 0)
        // (The other machine has a host secret of its own, made by its own use of the device key.)
        #expect(try credvault(["store", "s", "a", "--vault", dir.path("o/v.cvault").path], stdin: Data("y".utf8), state: "other-machine").status == 0)
        try expect(["lookup", "s", "a", "--vault", device], exit: 6, saying: "another machine", state: "other-machine")
    }
}
