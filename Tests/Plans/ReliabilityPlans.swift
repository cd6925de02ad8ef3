import CredentialVault
import Foundation

/// One step of a deterministic workload run by the helper process and replayed by the tests.
public enum PlannedOperation: Sendable, Equatable {
    case save(CredentialKey, Data, StorageOptions)
    case delete(CredentialKey)

    /// Applies the step to a model of the vault.
    public func apply(to state: inout [CredentialKey: Data]) {
        switch self {
        case .save(let key, let value, _): state[key] = value
        case .delete(let key): state[key] = nil
        }
    }
}

/// The crash victim's workload: saves of fresh keys (every third one device-only) and, every
/// fifth step, the delete of a key saved three steps earlier. The helper prints `ack I` after
/// step I returned; the harness then knows the vault holds exactly `state(after: I + 1)` or,
/// if the kill hit step I + 1, `state(after: I + 2)`.
public struct CrashPlan: Sendable {
    public static let service = "crash"
    public let prefix: String

    public init(prefix: String) { self.prefix = prefix }

    public func key(_ index: Int) -> CredentialKey { CredentialKey(service: Self.service, account: "\(prefix)-\(index)") }

    /// A value that names its key, so a record holding another record's value is caught.
    public func value(_ index: Int) -> Data {
        Data(String(repeating: "\(prefix)|\(index)|", count: 4).utf8)
    }

    public func operation(_ index: Int) -> PlannedOperation {
        if index % 5 == 4 { return .delete(key(index - 3)) }
        return .save(key(index), value(index), index % 3 == 0 ? .default : .portable)
    }

    /// The vault's records of this plan after the first `count` steps.
    public func state(after count: Int) -> [CredentialKey: Data] {
        var state: [CredentialKey: Data] = [:]
        for index in 0..<max(count, 0) { operation(index).apply(to: &state) }
        return state
    }
}

/// One stress writer's workload: saves and deletes over 20 keys of its own, and every tenth
/// step an increment of a counter shared by all writers (read-modify-write under the vault's
/// exclusive access). Lost updates show up as a wrong final state or a short counter.
public struct StressPlan: Sendable {
    public static let service = "stress"
    public static let counter = CredentialKey(service: "stress-shared", account: "counter")
    public let prefix: String
    public let count: Int

    public init(prefix: String, count: Int) {
        self.prefix = prefix
        self.count = count
    }

    public func operation(_ index: Int) -> PlannedOperation {
        let key = CredentialKey(service: Self.service, account: "\(prefix)-\((index * 7) % 20)")
        if index % 3 == 2 { return .delete(key) }
        return .save(key, Data("\(prefix)-value-\(index)".utf8), index % 2 == 0 ? .default : .portable)
    }

    public func incrementsCounter(_ index: Int) -> Bool { index % 10 == 9 }

    public var increments: Int { (0..<count).filter(incrementsCounter).count }

    /// This writer's records once it has finished.
    public var finalState: [CredentialKey: Data] {
        var state: [CredentialKey: Data] = [:]
        for index in 0..<count { operation(index).apply(to: &state) }
        return state
    }
}
