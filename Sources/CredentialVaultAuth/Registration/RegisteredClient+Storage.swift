import CredentialVault
import Foundation

extension RegisteredClient {
    /// The stored form: the secrets in clear inside the vault's encrypted record only.
    private struct Stored: Codable {
        var clientID: String
        var clientSecret: String?
        var clientSecretExpiresAt: Double?
        var clientIDIssuedAt: Double?
        var registrationAccessToken: String?
        var registrationClientURI: URL?
        var registrationEndpoint: URL
        var metadata: JSONValue
    }

    /// Saves the registration (client id, secrets, management URI) under `key`, device-only by
    /// default: the registration access token controls the client, so it does not travel with a
    /// copied vault. The encoded bytes are wiped after the store took them.
    public func save(
        to store: any AsyncTokenStorageAdapter, key: CredentialKey, options: StorageOptions = StorageOptions()
    ) async throws(AuthError) {
        let stored = Stored(
            clientID: clientID, clientSecret: clientSecret?.reveal(),
            clientSecretExpiresAt: clientSecretExpiresAt?.timeIntervalSince1970,
            clientIDIssuedAt: clientIDIssuedAt?.timeIntervalSince1970,
            registrationAccessToken: registrationAccessToken?.reveal(), registrationClientURI: registrationClientURI,
            registrationEndpoint: registrationEndpoint, metadata: metadata)
        var data: Data
        do { data = try JSONEncoder().encode(stored) } catch { throw .invalidConfiguration("the registered client is not encodable") }
        defer { data.resetBytes(in: 0..<data.count) }
        do { try await store.save(data, for: key, options: options) } catch { throw SessionStorage.map(error) }
    }

    /// The registration saved under `key`, or `nil` when there is none.
    /// - Throws: `AuthError.storage(.corrupted)` when the stored value is not a registration.
    public static func load(from store: any AsyncTokenStorageAdapter, key: CredentialKey) async throws(AuthError) -> RegisteredClient? {
        var data: Data?
        do { data = try await store.load(key) } catch { throw SessionStorage.map(error) }
        defer { if data != nil { data!.resetBytes(in: 0..<data!.count) } }
        guard let bytes = data else { return nil }
        let stored: Stored
        do { stored = try OutsideJSON.decode(Stored.self, from: bytes) } catch {
            throw .storage(.corrupted("the stored client registration \(key) is not readable"))
        }
        return RegisteredClient(
            clientID: stored.clientID, clientSecret: stored.clientSecret.map(RegistrationSecret.init),
            clientSecretExpiresAt: stored.clientSecretExpiresAt.map(Date.init(timeIntervalSince1970:)),
            clientIDIssuedAt: stored.clientIDIssuedAt.map(Date.init(timeIntervalSince1970:)),
            registrationAccessToken: stored.registrationAccessToken.map(RegistrationSecret.init),
            registrationClientURI: stored.registrationClientURI, registrationEndpoint: stored.registrationEndpoint,
            metadata: stored.metadata)
    }

    /// Deletes the registration saved under `key` (not the client at the provider: see
    /// `ClientRegistration.delete`); `true` when there was one.
    @discardableResult
    public static func deleteStored(from store: any AsyncTokenStorageAdapter, key: CredentialKey) async throws(AuthError) -> Bool {
        do { return try await store.delete(key) } catch { throw SessionStorage.map(error) }
    }
}
