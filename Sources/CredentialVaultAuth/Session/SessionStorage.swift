import CredentialVault
import Foundation

/// Where a session lives: one key in the application's store, JSON encoded, reached through the
/// asynchronous protocol only, so that no session read or write ever blocks the caller's thread.
/// A cancelled store call is `AuthError.cancelled` (the one cancellation of the auth API).
struct SessionStorage: Sendable {
    let store: any AsyncTokenStorageAdapter
    let key: CredentialKey
    let options: StorageOptions
    /// The in-process lock of `exclusively` for a store without one of its own; shared by every
    /// copy of this storage (the manager's and its refresh operations').
    let exclusion = AsyncExclusion()

    func load() async throws(AuthError) -> AuthSession? {
        let data: Data?
        do { data = try await store.load(key) } catch { throw Self.map(error) }
        guard let data else { return nil }
        do {
            return try OutsideJSON.decode(AuthSession.self, from: data, using: .session)
        } catch {
            throw .storage(.corrupted("the stored session \(key) is not readable; sign in again"))
        }
    }

    func save(_ session: AuthSession) async throws(AuthError) {
        var data: Data
        do { data = try JSONEncoder.session.encode(session) } catch { throw .invalidResponse("session not encodable") }
        defer { data.resetBytes(in: 0..<data.count) }
        do { try await store.save(data, for: key, options: options) } catch { throw Self.map(error) }
    }

    @discardableResult
    func delete() async throws(AuthError) -> Bool {
        do { return try await store.delete(key) } catch { throw Self.map(error) }
    }

    /// A store error as the auth API reports it.
    static func map(_ error: CredentialVaultError) -> AuthError {
        error == .cancelled ? .cancelled : .storage(error)
    }

    /// Runs `body` under the store's cross-process lock when it has one (`ExclusiveAccessStore`);
    /// otherwise just runs it (in-process single flight is the session manager's job).
    func exclusively<T: Sendable>(_ body: @escaping @Sendable () async throws(AuthError) -> T) async throws(AuthError) -> T {
        do {
            if let exclusive = store as? any ExclusiveAccessStore {
                return try await exclusive.withExclusiveAccess { () async throws -> T in try await body() }
            }
            // No lock of the store's own (the Secret Service, memory): this process's sign-ins,
            // sign-outs and refreshes of the session still run one at a time, so that a
            // refresh's read-then-save never overwrites a sign-in or brings back a sign-out.
            return try await exclusion.run { () async throws -> T in try await body() }
        } catch let error as AuthError {
            throw error
        } catch let error as CredentialVaultError {
            throw Self.map(error)
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .storage(.io("exclusive access failed"))
        }
    }
}

extension JSONEncoder {
    static var session: JSONEncoder {
        let encoder = JSONEncoder()
        // Dates as Foundation's own reference-date seconds: they round-trip exactly.
        encoder.dateEncodingStrategy = .deferredToDate
        encoder.outputFormatting = .sortedKeys
        return encoder
    }
}

extension JSONDecoder {
    static var session: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .deferredToDate
        return decoder
    }
}
