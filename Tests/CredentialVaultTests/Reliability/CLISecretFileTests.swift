import Foundation
import CredentialVaultTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Passphrase files get exactly the key file's checks: one code path
/// (`SecretFile`) opens them without following links or blocking, and `fstat`s the descriptor
/// (regular file, owner, mode, size) before reading a byte.
@Suite(.ownThread) final class CLISecretFileTests {
    let dir = TempDirectory()
    lazy var vault = dir.path("v/p.cvault").path
    lazy var keyVault = dir.path("k/k.cvault").path

    func credvault(_ arguments: [String], environment: [String: String] = [:], stdin: Data = Data()) throws -> CLIChild.Outcome {
        try CLIChild.run(arguments, environment: CLIChild.environment(dir, environment), stdin: stdin)
    }

    /// A file with `contents` and `mode` (the mode set explicitly: no umask involved).
    func file(_ name: String, _ contents: String, mode: mode_t) -> String {
        let path = dir.path(name).path
        _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8))
        chmod(path, mode)
        return path
    }

    /// A passphrase vault holding s/a = "v", and a key-file vault holding the same.
    func makeVaults() throws -> (passphrase: String, keyFile: String) {
        let passphrase = file("pass", "right horse\n", mode: 0o600)
        let keyFile = dir.path("key").path
        #expect(try credvault(["init", "--vault", vault, "--passphrase-file", passphrase, "--kdf", "insecure-testing-only"]).status == 0)
        #expect(try credvault(["store", "s", "a", "--vault", vault, "--passphrase-file", passphrase], stdin: Data("v".utf8)).status == 0)
        #expect(try credvault(["keygen", keyFile]).status == 0)
        #expect(try credvault(["store", "s", "a", "--vault", keyVault, "--key-file", keyFile], stdin: Data("v".utf8)).status == 0)
        return (passphrase, keyFile)
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660])
    func aLoosePassphraseFileIsRefusedLikeALooseKeyFile(mode: Int) throws {
        let (passphrase, keyFile) = try makeVaults()
        chmod(passphrase, mode_t(mode))
        chmod(keyFile, mode_t(mode))
        let octal = String(mode, radix: 8)
        let byKeyFile = try credvault(["lookup", "s", "a", "--vault", keyVault, "--key-file", keyFile])
        chmod(keyFile, 0o600)
        let byOption = try credvault(["lookup", "s", "a", "--vault", vault, "--passphrase-file", passphrase])
        let byEnvironment = try credvault(["lookup", "s", "a", "--vault", vault], environment: ["CREDVAULT_PASSPHRASE_FILE": passphrase])
        let asNewPassphrase = try credvault(["passwd", "--vault", keyVault, "--key-file", keyFile, "--new-passphrase-file", passphrase])
        for (what, outcome) in [("--key-file", byKeyFile), ("--passphrase-file", byOption), ("$CREDVAULT_PASSPHRASE_FILE", byEnvironment), ("--new-passphrase-file", asNewPassphrase)] {
            #expect(outcome.status == 9, "\(what) mode \(octal): \(outcome.status) \(outcome.stderr)")
            #expect(outcome.stderr.contains("(mode \(octal)); run: chmod 600"), "\(what): \(outcome.stderr)")
            #expect(outcome.stdout.isEmpty, "\(what): nothing read, nothing printed")
        }
        chmod(passphrase, 0o600)
        #expect(try credvault(["lookup", "s", "a", "--vault", vault, "--passphrase-file", passphrase]).stdout == Data("v".utf8))
    }

    @Test func aPassphraseFileMustBeARegularFileOfThisUserAndNoLink() throws {
        let (passphrase, _) = try makeVaults()
        let link = dir.path("link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: passphrase)
        let fifo = dir.path("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let directory = dir.path("a-directory").path
        #expect(mkdir(directory, 0o700) == 0)
        let foreign = file("foreign", "right horse\n", mode: 0o600)
        #expect(chown(foreign, 65534, 65534) == 0)
        let cases: [(String, Int32, String)] = [
            (link, 2, "is a symbolic link"), (fifo, 2, "not a regular file"), (directory, 2, "not a regular file"),
            (foreign, 9, "belongs to another user"), (dir.path("missing").path, 2, "cannot read the passphrase file"),
        ]
        for (path, status, phrase) in cases {
            // A FIFO opened for reading would block until a writer came: never a hang.
            let environment = CLIChild.environment(dir, [:])
            let vault = vault
            let outcome = withinDeadline(.seconds(60), "credvault with the passphrase file \(path)") {
                try? CLIChild.run(["lookup", "s", "a", "--vault", vault, "--passphrase-file", path], environment: environment, stdin: Data())
            }
            let answered = try #require(outcome.flatMap { $0 }, "\(path): credvault ran")
            #expect(answered.status == status && answered.stderr.contains(phrase), "\(path): \(answered.status) \(answered.stderr)")
        }
    }
}
