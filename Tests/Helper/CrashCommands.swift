import CredentialVault
import CredentialVaultTestPlans
import Foundation

func storeMany(_ args: [String]) throws {
    let store = try openVault(args[0], keyFile: args[1])
    let count = Int(args[3]) ?? 0
    let deleteEvery = args.count > 4 ? Int(args[4]) ?? 0 : 0
    for i in 0..<count {
        let key = CredentialKey(service: "stress", account: "\(args[2])-\(i)")
        try store.save(Data("\(args[2])-value-\(i)".utf8), for: key, options: .portable)
        if deleteEvery > 0, i % deleteEvery == deleteEvery - 1 { try store.delete(key) }
        emit("ack \(i)")
    }
}

func crashWriter(_ args: [String]) throws {
    let store = try openVault(args[0], keyFile: args[1])
    let plan = CrashPlan(prefix: args[2])
    emit("ready")
    for index in 0..<1_000_000 {
        switch plan.operation(index) {
        case .save(let key, let value, let options): try store.save(value, for: key, options: options)
        case .delete(let key): try store.delete(key)
        }
        emit("ack \(index)")
    }
}

func changeSecretLoop(_ args: [String]) throws {
    let url = URL(fileURLWithPath: args[0])
    let keys = [("A", try passphrase(fromFile: args[1])), ("B", try passphrase(fromFile: args[2]))]
    var current = 0
    let store: SealedFileStore
    do {
        store = try SealedFileStore.open(at: url, secret: keys[0].1, configuration: testConfiguration)
    } catch .wrongPassphrase {
        current = 1
        store = try SealedFileStore.open(at: url, secret: keys[1].1, configuration: testConfiguration)
    }
    emit("ready \(keys[current].0)")
    while true {
        let next = 1 - current
        try store.changeSecret(from: keys[current].1, to: keys[next].1, kdf: .insecureTestingOnly)
        current = next
        emit("key \(keys[current].0)")
    }
}

func rotateLoop(_ args: [String]) throws {
    let store = try openVault(args[0], keyFile: args[1])
    let key = VaultSecret.keyFile(URL(fileURLWithPath: args[1]))
    emit("ready")
    var count = 0
    while true {
        try store.rotateDataKey(secret: key)
        count += 1
        emit("rotated \(count)")
    }
}

/// `save-as-user UID VAULT KEYFILE`: drops to UID (from root), opens the vault, tries one
/// save, then one data-key rotation (a whole-file rewrite); prints `saved` or `error
/// DESCRIPTION`, then `rotate: rotated` or `rotate: error DESCRIPTION`. For faults root does not
/// see (a directory without write permission).
func saveAsUser(_ args: [String]) throws {
    guard let uid = UInt32(args[0]), setgid(uid) == 0, setuid(uid) == 0 else { fail("save-as-user: cannot become \(args[0])") }
    let store = try openVault(args[1], keyFile: args[2])
    do {
        try store.save(Data("new".utf8), for: CredentialKey(service: "s", account: "new"), options: .portable)
        emit("saved")
    } catch {
        emit("error \(error)")
    }
    do {
        try store.rotateDataKey(secret: .keyFile(URL(fileURLWithPath: args[2])))
        emit("rotate: rotated")
    } catch {
        emit("rotate: error \(error)")
    }
}
