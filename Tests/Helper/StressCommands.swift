import CredentialVault
import CredentialVaultTestPlans
import Foundation

func stress(_ args: [String]) async throws {
    let store = try openVault(args[0], keyFile: args[1])
    let plan = StressPlan(prefix: args[2], count: Int(args[3]) ?? 0)
    for index in 0..<plan.count {
        switch plan.operation(index) {
        case .save(let key, let value, let options): try await store.save(value, for: key, options: options)
        case .delete(let key): try await store.delete(key)
        }
        if plan.incrementsCounter(index) {
            try await store.withExclusiveAccess {
                let current = try store.load(StressPlan.counter).flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
                try store.save(Data("\(current + 1)".utf8), for: StressPlan.counter, options: .portable)
            }
        }
    }
    emit("done")
}

/// A lock holder in the middle of its critical section, for the "SIGKILLed holder" tests.
func holdExclusive(_ args: [String]) async throws {
    let store = try openVault(args[0], keyFile: args[1])
    try await store.withExclusiveAccess {
        try await store.save(Data("held".utf8), for: CredentialKey(service: "holder", account: "inside"), options: .portable)
        emit("holding")
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}

func holdLock(_ args: [String]) {
    let fd = open(args[0] + ".lock", O_RDWR | O_CREAT, 0o600)
    guard fd >= 0, flock(fd, LOCK_EX) == 0 else { fail("hold-lock: cannot lock") }
    emit("locked")
    Thread.sleep(forTimeInterval: Double(args[1]) ?? 1)
}
