import CredentialVault
import Foundation

/// Where a session lives: one key in the application's `TokenStorageAdapter`, JSON encoded.
struct SessionStorage: Sendable {
    let store: any TokenStorageAdapter
    let key: CredentialKey
    let options: StorageOptions

    func load() throws(AuthError) -> AuthSession? {
        let data: Data?
        do { data = try store.load(key) } catch { throw .storage(error) }
        guard let data else { return nil }
        do {
            return try JSONDecoder.session.decode(AuthSession.self, from: data)
        } catch {
            throw .storage(.corrupted("the stored session \(key) is not readable; sign in again"))
        }
    }

    func save(_ session: AuthSession) throws(AuthError) {
        let data: Data
        do { data = try JSONEncoder.session.encode(session) } catch { throw .invalidResponse("session not encodable") }
        do { try store.save(data, for: key, options: options) } catch { throw .storage(error) }
    }

    @discardableResult
    func delete() throws(AuthError) -> Bool {
        do { return try store.delete(key) } catch { throw .storage(error) }
    }

    /// Runs `body` under the store's cross-process lock when it has one (`ExclusiveAccessStore`);
    /// otherwise just runs it (in-process single flight is the session manager's job).
    func exclusively<T: Sendable>(_ body: @escaping @Sendable () async throws(AuthError) -> T) async throws(AuthError) -> T {
        guard let exclusive = store as? any ExclusiveAccessStore else { return try await body() }
        do {
            return try await exclusive.withExclusiveAccess { () async throws -> T in try await body() }
        } catch let error as AuthError {
            throw error
        } catch let error as CredentialVaultError {
            throw .storage(error)
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
