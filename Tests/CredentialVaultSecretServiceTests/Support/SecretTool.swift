import CredentialVaultTestSupport
import Foundation

/// Drives libsecret's `secret-tool` (package libsecret-tools), the other writer of the
/// `service`/`username` convention.
enum SecretTool {
    static func path() throws -> String {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/secret-tool"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw ToolMissing()
    }

    struct ToolMissing: Error {}

    /// `secret-tool store --label=LABEL service S username A`, the value on stdin.
    static func store(service: String, account: String, label: String, value: Data) throws {
        let result = try CLIChild.run(
            try path(), ["store", "--label=\(label)", "service", service, "username", account], stdin: value)
        guard result.status == 0 else { throw Failed(output: result.stderr) }
    }

    /// `secret-tool lookup service S username A`: the value, or `nil` when it exits non-zero.
    static func lookup(service: String, account: String) throws -> Data? {
        let result = try CLIChild.run(try path(), ["lookup", "service", service, "username", account])
        return result.status == 0 ? result.stdout : nil
    }

    /// The labels of the items `secret-tool search --all service S` finds.
    static func labels(service: String) throws -> [String] {
        let result = try CLIChild.run(try path(), ["search", "--all", "service", service])
        return (result.stdoutText + "\n" + result.stderr).split(separator: "\n")
            .filter { $0.hasPrefix("label = ") }.map { String($0.dropFirst("label = ".count)) }
    }

    /// How many items `secret-tool search --all service S` finds.
    static func search(service: String) throws -> Int { try labels(service: service).count }

    struct Failed: Error { var output: String }
}
