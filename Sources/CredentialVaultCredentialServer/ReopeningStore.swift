import CredentialVault
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The store a `CredentialServer` reads, opened again when another process rotated the vault's
/// data key (`credvault rotate`), moved it to another custodian, put another vault at its path
/// or removed it: an open store then answers `reopenRequired` (or `io`, for a removed file) to
/// every read, and a server that kept it would refuse every unit while staying up, so that the
/// service manager never restarts it. (A passphrase change, `credvault passwd`, keeps the data
/// key: the open store goes on reading.) Read from the server's one thread.
final class ReopeningStore: Sendable {
    private let store: Mutex<any TokenStorageAdapter>
    private let open: (@Sendable () throws -> (any TokenStorageAdapter)?)?

    /// `store`, opened again by `open` (with the same options) when it answers `reopenRequired`
    /// or `io`; without `open`, those errors are the answer.
    init(_ store: any TokenStorageAdapter, open: (@Sendable () throws -> (any TokenStorageAdapter)?)?) {
        self.store = Mutex(store)
        self.open = open
    }

    /// The value of `key`; on `reopenRequired` (re-keyed, custody moved, replaced by another
    /// vault, as a restore or a new `init` does) or `io` (the file was removed), the vault is
    /// opened again and asked once more. An older copy of this vault put back is refused by the
    /// open as by any other (`rolledBack` is never reopened).
    func load(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        let current = store.withLock { $0 }
        do {
            return try current.load(key)
        } catch {
            guard let open, Self.asksToReopen(error) else { throw error }
            let reopened: (any TokenStorageAdapter)?
            do { reopened = try open() } catch let error as CredentialVaultError { throw error } catch {
                throw .io("the vault changed and cannot be opened again: \(error)")
            }
            guard let reopened else { throw .notAvailable("the vault is gone") }
            store.withLock { $0 = reopened }
            return try reopened.load(key)
        }
    }

    private static func asksToReopen(_ error: CredentialVaultError) -> Bool {
        switch error {
        case .reopenRequired, .io: true
        default: false
        }
    }
}
