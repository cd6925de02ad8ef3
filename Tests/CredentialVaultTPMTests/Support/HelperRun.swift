import CredentialVaultTestSupport
import CredentialVault
import Foundation

/// Runs `credvault-tpm-helper`, as this user or (from root) as `nobody` through setpriv.
enum HelperRun {
    /// The helper's one line of output.
    static func line(_ arguments: [String], stdin: String = "", asNobody: Bool = false) throws -> String {
        let process = try start(arguments, asNobody: asNobody)
        process.write(stdin)
        process.closeInput()
        let text = String(decoding: process.readAll(), as: UTF8.self)
        process.wait()
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The helper, running, with its stdin and stdout.
    static func start(_ arguments: [String], asNobody: Bool = false) throws -> Subprocess {
        if asNobody {
            return try Subprocess(
                "/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", BuiltProducts.tpmHelper.path] + arguments,
                environment: ["TSS2_LOG": "all+NONE"])
        }
        return try Subprocess(BuiltProducts.tpmHelper.path, arguments, environment: ["TSS2_LOG": "all+NONE"])
    }

    /// The hex of a binding, for the helper's stdin (test bindings only).
    static func hex(_ bytes: SecureBytes) -> String {
        bytes.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
    }

    /// The helper's fingerprint of a secret (the same keyed hash it prints).
    static func fingerprint(_ secret: SecureBytes) -> String {
        let label = Array("credvault-tpm-helper fingerprint".utf8)
        return label.withUnsafeBytes { Crypto.keyedHash(key: secret, [$0]) }.prefix(16).map { String(format: "%02x", $0) }.joined()
    }
}
