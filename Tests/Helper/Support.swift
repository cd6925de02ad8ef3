import CredentialVault
import Foundation

/// One line on stdout, written at once (the harness counts acknowledgements by line).
func emit(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(3)
}

/// The device identity the tests give the helper through its environment.
var testIdentity: DeviceIdentity {
    let env = ProcessInfo.processInfo.environment
    return DeviceIdentity(
        hostSecretURL: URL(fileURLWithPath: env["CREDVAULT_TEST_HOST_SECRET"] ?? "/nonexistent"),
        machineID: env["CREDVAULT_TEST_MACHINE_ID"] ?? "test-machine")
}

var testConfiguration: SealedFileConfiguration {
    SealedFileConfiguration(device: testIdentity, lockTimeout: .seconds(60))
}

func openVault(_ path: String, keyFile: String) throws -> SealedFileStore {
    try SealedFileStore.open(
        at: URL(fileURLWithPath: path), secret: .keyFile(URL(fileURLWithPath: keyFile)), configuration: testConfiguration)
}

/// A passphrase read from a file into guarded memory (the file's bytes, as they are).
func passphrase(fromFile path: String) throws -> VaultSecret {
    guard var bytes = FileManager.default.contents(atPath: path).map({ [UInt8]($0) }) else {
        fail("cannot read \(path)")
    }
    defer { for i in bytes.indices { bytes[i] = 0 } }
    return .passphrase(SecureBytes(copying: bytes))
}
