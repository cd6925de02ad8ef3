// A helper process for the multi-process tests. Not part of the product.
//
//   credvault-testhelper store-many VAULT KEYFILE PREFIX COUNT [DELETE_EVERY]
//       opens VAULT with KEYFILE and saves COUNT credentials PREFIX-0...; prints "ack N" after
//       each durable save (the crash tests count acknowledgements).
//   credvault-testhelper hold-lock VAULT SECONDS
//       holds the vault's lock file for SECONDS, printing "locked" once it has it.
import CredentialVault
import Foundation

func emit(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
let args = CommandLine.arguments
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(3)
}
guard args.count >= 2 else { fail("usage: credvault-testhelper store-many|hold-lock ...") }
let identity = DeviceIdentity(
    hostSecretURL: URL(fileURLWithPath: ProcessInfo.processInfo.environment["CREDVAULT_TEST_HOST_SECRET"] ?? "/nonexistent"),
    machineID: "test-machine")
switch args[1] {
case "store-many" where args.count >= 6:
    do {
        let store = try SealedFileStore.open(
            at: URL(fileURLWithPath: args[2]), key: .keyFile(URL(fileURLWithPath: args[3])),
            configuration: SealedFileConfiguration(device: identity, lockTimeout: .seconds(60)))
        let count = Int(args[5]) ?? 0
        let deleteEvery = args.count > 6 ? Int(args[6]) ?? 0 : 0
        for i in 0..<count {
            let key = CredentialKey(service: "stress", account: "\(args[4])-\(i)")
            try store.save(Data("\(args[4])-value-\(i)".utf8), for: key, options: .portable)
            if deleteEvery > 0, i % deleteEvery == deleteEvery - 1 { try store.delete(key) }
            emit("ack \(i)")
        }
    } catch { fail("store-many: \(error)") }
case "hold-lock" where args.count >= 4:
    let fd = open(args[2] + ".lock", O_RDWR | O_CREAT, 0o600)
    guard fd >= 0, flock(fd, LOCK_EX) == 0 else { fail("hold-lock: cannot lock") }
    emit("locked")
    Thread.sleep(forTimeInterval: Double(args[3]) ?? 1)
default:
    fail("unknown helper command")
}
