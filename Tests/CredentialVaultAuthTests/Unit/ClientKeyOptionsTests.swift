import CredentialVaultTestSupport
import Foundation
import Testing

/// `credvault auth token --client-credentials` refuses unsafe ways of giving it a key before it
/// opens the vault or calls any provider (the issuer here is a closed port).
@Suite("credvault auth: client key options")
struct ClientKeyOptionsTests {
    static func run(_ extra: [String], in directory: TempDirectory) throws -> CLIChild.Outcome {
        let unreachable = try ClosedPort()
        let arguments = [
            "auth", "token", "--client-credentials", "--issuer", "http://127.0.0.1:\(unreachable.port)",
            "--client-id", "svc", "--backend", "memory",
        ]
        return try CLIChild.run(arguments + extra, executable: BuiltProducts.full, environment: CLIChild.environment(directory), timeout: 120)
    }

    @Test("a key file readable by the group, or reached through a symbolic link, is refused")
    func unsafeKeyFile() throws {
        let directory = TempDirectory()
        let key = try IndependentJOSE.openSSLKey("EC", in: directory, "key.pem")
        chmod(key.path, 0o640)
        let readable = try Self.run(["--client-key-file", key.path], in: directory)
        #expect(readable.status == 9, "\(readable.stderr)")  // permission denied, as for every secret file
        #expect(readable.stderr.contains("accessible by other users"))
        chmod(key.path, 0o600)
        let link = directory.path("link.pem")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: key)
        let linked = try Self.run(["--client-key-file", link.path], in: directory)
        #expect(linked.status != 0 && linked.stderr.contains("link"), "\(linked.status) \(linked.stderr)")
    }

    @Test("key material given on the command line is never taken as a key, nor echoed")
    func keyOnCommandLine() throws {
        let directory = TempDirectory()
        let pem = try String(contentsOf: IndependentJOSE.openSSLKey("EC", in: directory, "key.pem"), encoding: .utf8)
        let body = try #require(pem.split(separator: "\n").dropFirst().first.map(String.init))
        let jwk = #"{"kty":"OKP","crv":"Ed25519","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"}"#
        for arguments in [
            ["--client-key", pem], ["--client-key-file", pem], ["--client-secret-file", pem], ["--client-key-file", jwk],
            ["--client-key-pem", pem], ["--client-secret", "s3cret-value"], ["--client-key", jwk],
        ] {
            let outcome = try Self.run(arguments, in: directory)
            #expect(outcome.status == 2, "\(arguments[0]): \(outcome.stderr)")
            #expect(outcome.stdout.isEmpty)
            #expect(!outcome.stderr.contains(body), "\(arguments[0]) echoed the key")
            #expect(!outcome.stderr.contains("nWGxne_9WmC6hEr0"), "\(arguments[0]) echoed the JWK")
            #expect(!outcome.stderr.contains("s3cret-value"))
        }
    }
}
