import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The store `serve-credentials` reads, opened again when another process replaced or re-keyed
/// the vault (`credvault rotate`, `passwd`, a custody move): an open store then answers
/// `locked` to every read, and a server that kept it would refuse every unit while staying up,
/// so that the service manager never restarts it. Used from the server's one thread only.
final class ReopeningStore {
    private var store: any TokenStorageAdapter
    private let open: () throws -> (any TokenStorageAdapter)?

    /// `store`, opened again by `open` (with the same options) when it answers `locked`.
    init(_ store: any TokenStorageAdapter, open: @escaping () throws -> (any TokenStorageAdapter)?) {
        self.store = store
        self.open = open
    }

    /// The value of `key`; on `locked`, the vault is opened again and asked once more.
    func load(_ key: CredentialKey) throws(CredentialVaultError) -> Data? {
        do {
            return try store.load(key)
        } catch .locked {
            let reopened: (any TokenStorageAdapter)?
            do { reopened = try open() } catch let error as CredentialVaultError { throw error } catch {
                throw .io("the vault changed and cannot be opened again: \(error)")
            }
            guard let reopened else { throw .notAvailable("the vault is gone") }
            store = reopened
            return try store.load(key)
        }
    }
}
