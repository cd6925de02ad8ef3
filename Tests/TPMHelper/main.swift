// A helper process for the TPM custody and kernel keyring tests. Not part of the product.
//
//   unseal TCTI DIR
//       reads a binding (hex) on stdin, asks TPMCustodian(tcti: TCTI, directory: DIR) for the
//       device secret (create: false); prints "unsealed FINGERPRINT" (a keyed hash, never the
//       secret) or "error DESCRIPTION". Run as another user (setpriv) for the binding tests.
//   unseal-and-wait TCTI DIR
//       the same, then drops the secret, prints "done FINGERPRINT" and waits for stdin to close:
//       the process a memory scan reads.
//   create-and-wait TCTI DIR
//       the same with create: true (a new secret sealed and its blob written), then as above.
//   keyring-load DESCRIPTION
//       KernelKeyCache(prefix: "").load(name: DESCRIPTION): prints "found FINGERPRINT", "absent" or "error DESCRIPTION".
//   keyring-read-id ID
//       reads the kernel key ID directly: prints "read FINGERPRINT", "gone" or "error DESCRIPTION".
//
// Exit 0 whenever the line was printed; 2 on bad usage.
import CredentialVault
import CredentialVaultTPM
import Foundation

#if canImport(Glibc)
import Glibc
#endif

let args = Array(CommandLine.arguments.dropFirst())

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// A keyed hash of the secret in hex: lets the test compare two secrets without either process
/// printing one. Not a secret itself.
func fingerprint(_ secret: SecureBytes) -> String {
    let label = Array("credvault-tpm-helper fingerprint".utf8)
    return label.withUnsafeBytes { Crypto.keyedHash(key: secret, [$0]) }.prefix(16).map { String(format: "%02x", $0) }.joined()
}

/// The binding from stdin's first line (hex): straight into guarded memory.
func readBinding() -> SecureBytes {
    let line = readLine() ?? ""
    var bytes: [UInt8] = []
    var iterator = Array(line.utf8).makeIterator()
    while let high = iterator.next(), let low = iterator.next() {
        guard let byte = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { break }
        bytes.append(byte)
    }
    defer { for i in bytes.indices { bytes[i] = 0 } }
    return SecureBytes(copying: bytes)
}

func unseal(tcti: String, directory: String, create: Bool = false) -> String {
    // A minute's deadline: swtpm answers within it on a loaded machine running tests in parallel.
    let custodian = TPMCustodian(configuration: TPMConfiguration(tcti: tcti, directory: directory, deadline: .seconds(60)))
    do {
        let secret = try custodian.deviceSecret(binding: readBinding(), create: create)
        return fingerprint(secret)
    } catch {
        return "error \(error)"
    }
}

switch (args.first, args.count) {
case ("unseal", 3):
    let result = unseal(tcti: args[1], directory: args[2])
    say(result.hasPrefix("error ") ? result : "unsealed \(result)")
case ("unseal-and-wait", 3):
    let result = unseal(tcti: args[1], directory: args[2])
    say(result.hasPrefix("error ") ? result : "done \(result)")
    while readLine() != nil {}
case ("create-and-wait", 3):
    let result = unseal(tcti: args[1], directory: args[2], create: true)
    say(result.hasPrefix("error ") ? result : "done \(result)")
    while readLine() != nil {}
case ("keyring-load", 2):
    do {
        if let key = try KernelKeyCache(prefix: "").load(name: args[1]) { say("found \(fingerprint(key))") } else { say("absent") }
    } catch {
        say("error \(error)")
    }
case ("keyring-read-id", 2):
    guard let id = Int32(args[1]) else { exit(2) }
    do {
        if let key = try KernelKeyring.read(id: id) { say("read \(fingerprint(key))") } else { say("gone") }
    } catch {
        say("error \(error)")
    }
default:
    FileHandle.standardError.write(Data("usage: credvault-tpm-helper unseal|unseal-and-wait TCTI DIR | keyring-load NAME | keyring-read-id ID\n".utf8))
    exit(2)
}
