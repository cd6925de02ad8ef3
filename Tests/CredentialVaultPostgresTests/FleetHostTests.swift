import CredentialVaultTestSupport
import CredentialVault
import CredentialVaultPostgres
import Foundation
import Testing

/// Hosts are enrolled and removed without re-sealing; a rotation re-seals every row at once.
@Suite(.enabled(if: TestCluster.available, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES)"))
struct FleetHostTests {
    let key = CredentialKey(service: "api.example", account: "key")

    @Test func addedHostsOpenTheStoreAndRemovedOnesDoNot() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            try fleet.store.synchronous.save(Data("shared".utf8), for: key, options: .portable)
            let before = try TestCluster.psql("SELECT encode(sealed, 'hex') FROM \(fleet.records)")
            try fleet.store.addHost("web-2", secret: .passphrase("web-2 passphrase"), kdf: .insecureTestingOnly)
            #expect {
                try fleet.store.addHost("web-2", secret: .passphrase("other"), kdf: .insecureTestingOnly)
            } throws: { error in
                guard case .invalidArgument = error as? CredentialVaultError else { return false }
                return true
            }
            #expect(try TestCluster.psql("SELECT encode(sealed, 'hex') FROM \(fleet.records)") == before, "no row was re-sealed")
            let web2 = try PostgresStore.open(fleet.configuration(), host: "web-2", secret: .passphrase("web-2 passphrase"))
            #expect(try web2.synchronous.load(key) == Data("shared".utf8))
            #expect(throws: CredentialVaultError.wrongPassphrase) {
                try PostgresStore.open(fleet.configuration(), host: "web-2", secret: .passphrase("wrong"))
            }
            #expect(try fleet.store.hosts().map(\.name) == ["test-host", "web-2"])
            #expect(try fleet.store.removeHost("web-2"))
            #expect {
                try PostgresStore.open(fleet.configuration(), host: "web-2", secret: .passphrase("web-2 passphrase"))
            } throws: { error in
                guard case .permissionDenied = error as? CredentialVaultError else { return false }
                return true
            }
            #expect {
                try fleet.store.removeHost("test-host")
            } throws: { error in
                guard case .invalidArgument = error as? CredentialVaultError else { return false }
                return true
            }
            let status = try fleet.store.status()
            #expect(status.records == 1 && status.keyEpoch == 1 && status.hosts.count == 1 && status.storeID == fleet.store.storeID)
        }
    }

    @Test func rotationReSealsEveryRowAndRetiresTheOldKey() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            try fleet.store.synchronous.save(Data("one".utf8), for: key, options: .portable)
            try fleet.store.synchronous.save(Data("two".utf8), for: CredentialKey(service: "b", account: "2"), options: .portable)
            try fleet.store.addHost("dropped", secret: .passphrase("p"), kdf: .insecureTestingOnly)
            let before = try TestCluster.psql("SELECT string_agg(encode(name_hash, 'hex'), ',' ORDER BY name_hash) FROM \(fleet.records)")
            let rotated = try fleet.store.rotateDataKey(hosts: ["test-host": .keyFile(fleet.keys.keyFile)])
            #expect(rotated.keyEpoch == 2)
            let after = try TestCluster.psql("SELECT string_agg(encode(name_hash, 'hex'), ',' ORDER BY name_hash) FROM \(fleet.records)")
            #expect(after != before, "record ids are keyed by the data key: all new")
            #expect(try rotated.synchronous.load(key) == Data("one".utf8))
            #expect(try fleet.reopen().synchronous.listKeys().count == 2)
            // The old key no longer reads; hosts not kept must be enrolled again.
            #expect(throws: CredentialVaultError.locked) { try fleet.store.synchronous.load(key) }
            #expect {
                try PostgresStore.open(fleet.configuration(), host: "dropped", secret: .passphrase("p"))
            } throws: { error in
                guard case .permissionDenied = error as? CredentialVaultError else { return false }
                return true
            }
        }
    }
}
