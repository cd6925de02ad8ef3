import CredentialVault
import CredentialVaultTestSupport
import Foundation

@testable import CredentialVaultSecretService

/// A keyring file in a private temporary directory, and Debian's `secret-tool` using it through
/// libsecret's file backend (`SECRET_BACKEND=file`, the file at `SECRET_FILE_TEST_PATH`, its key
/// derived from the bytes of `SECRET_FILE_TEST_PASSWORD`, which take the place of the portal's
/// 64 bytes; no D-Bus session is needed).
final class SecretToolFile: Sendable {
    let directory = TempDirectory()
    let password = "correct horse battery staple"
    var path: String { directory.path("keyrings/default.keyring").path }

    /// A store over the same file with the same password.
    func store(application: ApplicationIdentifier = .credvault, clock: any CredentialClock = SystemClock()) throws -> LibsecretFileStore {
        try LibsecretFileStore(configuration: configuration(clock: clock, application: application))
    }

    /// The store's configuration.
    func configuration(clock: any CredentialClock = SystemClock(), application: ApplicationIdentifier = .credvault) -> LibsecretFileConfiguration {
        LibsecretFileConfiguration(
            path: path, keySource: .password(SecureBytes(copying: Array(password.utf8))), application: application, clock: clock)
    }

    /// Runs `secret-tool` with `arguments`: (status, stdout, stderr).
    func run(_ arguments: [String], stdin: Data? = nil) async throws -> (status: Int32, out: String, err: String) {
        let process = try CLIProcess(
            arguments, executable: URL(fileURLWithPath: "/usr/bin/secret-tool"),
            environment: ["SECRET_BACKEND": "file", "SECRET_FILE_TEST_PATH": path, "SECRET_FILE_TEST_PASSWORD": password], stdin: stdin)
        let status = try await process.wait(ceiling: .seconds(60))
        return (status, process.stdout, process.stderr)
    }

    /// `secret-tool store` of `secret` with `attributes`; true when it succeeded.
    func store(_ secret: String, label: String = "stored by secret-tool", attributes: [String: String]) async throws -> Bool {
        try await run(["store", "--label=\(label)"] + Self.arguments(attributes), stdin: Data(secret.utf8)).status == 0
    }

    /// `secret-tool lookup`: the secret of the first item with `attributes`, or `nil`.
    func lookup(_ attributes: [String: String]) async throws -> String? {
        let result = try await run(["lookup"] + Self.arguments(attributes))
        return result.status == 0 ? result.out : nil
    }

    /// `secret-tool lookup`'s output as bytes (through `od`: the output need not be UTF-8), or
    /// `nil` when nothing matched.
    func lookupBytes(_ attributes: [String: String]) async throws -> [UInt8]? {
        let command = "/usr/bin/secret-tool lookup \"$@\" > \"$0.out\" && od -An -v -tx1 \"$0.out\""
        let process = try CLIProcess(
            ["-c", command, directory.path("lookup").path] + Self.arguments(attributes), executable: URL(fileURLWithPath: "/bin/sh"),
            environment: ["SECRET_BACKEND": "file", "SECRET_FILE_TEST_PATH": path, "SECRET_FILE_TEST_PASSWORD": password])
        guard try await process.wait(ceiling: .seconds(60)) == 0 else { return nil }
        return process.stdout.split(whereSeparator: \.isWhitespace).compactMap { UInt8($0, radix: 16) }
    }

    /// `secret-tool clear`.
    func clear(_ attributes: [String: String]) async throws {
        _ = try await run(["clear"] + Self.arguments(attributes))
    }

    /// How many items `secret-tool search --all` finds with `attributes`, and what it printed.
    func search(_ attributes: [String: String]) async throws -> (count: Int, listing: String) {
        let result = try await run(["search", "--all"] + Self.arguments(attributes))
        let listing = result.out + result.err
        return (listing.split(separator: "\n").filter { $0.hasPrefix("label = ") }.count, listing)
    }

    /// The file's bytes.
    func bytes() throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// Replaces the file's bytes (mode 0600 kept).
    func write(_ bytes: [UInt8]) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

    private static func arguments(_ attributes: [String: String]) -> [String] {
        attributes.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
    }
}
