import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultPostgres

/// Hosts enrolled by their public key (each a `credvault` process with its own private key file
/// and state directory): the data key is sealed to each, a rotation re-seals it to every host
/// but those removed, and a key put in by the database's administrator is not believed by a
/// host that knew the fleet's key.
@Suite(.enabled(if: TestCluster.available, "needs scripts/services/postgres.sh (CREDVAULT_TEST_POSTGRES)"))
struct FleetPublicKeyTests {
    /// One host of the fleet: its own private key file and home (its state directory).
    struct Host {
        let name: String
        let home = KeyFileDirectory()
        var privateKey: URL { home.keyFile }

        /// Runs `credvault ARGUMENTS` as this host (on the test's private D-Bus, when there is one).
        func run(_ arguments: [String], _ schema: String, stdin: Data = Data()) throws -> FleetCommandLine.Outcome {
            var environment = [
                "CREDVAULT_POSTGRES": TestCluster.conninfo! + " application_name=\(schema)", "CREDVAULT_FLEET_SCHEMA": schema,
                "CREDVAULT_FLEET_HOST": name, "CREDVAULT_FLEET_PRIVATE_KEY": privateKey.path, "PATH": "/usr/bin:/bin",
                "HOME": home.url.path, "XDG_DATA_HOME": home.url.appendingPathComponent("data").path,
            ]
            if ProcessInfo.processInfo.environment["CREDVAULT_TEST_KEYRING"] != nil {
                environment["DBUS_SESSION_BUS_ADDRESS"] = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"]
            }
            return try FleetCommandLine.spawn(FleetCommandLine.executable, arguments, environment: environment, stdin: stdin)
        }

        func publicKey(_ schema: String) throws -> String {
            let outcome = try run(["fleet", "public-key"], schema)
            #expect(outcome.status == 0, "\(outcome)")
            return outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        func lookup(_ schema: String) throws -> FleetCommandLine.Outcome {
            try run(["lookup", "--backend", "postgres", "api.example", "deploy"], schema)
        }

        func store(_ value: String, _ schema: String) throws -> FleetCommandLine.Outcome {
            try run(["store", "--backend", "postgres", "--portable", "api.example", "deploy"], schema, stdin: Data(value.utf8))
        }
    }

    @Test func threeHostsByPublicKeyAndARotationThatReKeysAllButTheRemovedOne() async throws {
        try await offThePool {
            let schema = TestCluster.freshSchema()
            let web1 = Host(name: "web-1"), web2 = Host(name: "web-2"), web3 = Host(name: "web-3")
            #expect(try web1.run(["fleet", "init"], schema).status == 0)
            for host in [web2, web3] {
                let added = try web1.run(["fleet", "add-host", host.name, "--public-key", try host.publicKey(schema)], schema)
                #expect(added.status == 0, "\(added)")
            }
            #expect(try web2.store("v1", schema).status == 0)
            for host in [web1, web2, web3] { #expect(try host.lookup(schema).stdout == "v1", "\(host.name)") }

            // web-3 is removed; the rotation re-keys web-1 (which rotates) and web-2, without
            // web-2's secret.
            #expect(try web1.run(["fleet", "remove-host", "web-3"], schema).status == 0)
            let rotated = try web1.run(["fleet", "rotate"], schema)
            #expect(rotated.status == 0 && rotated.stdout.contains("re-keyed by public key: web-2") && !rotated.stdout.contains("enrol again"), "\(rotated)")
            #expect(try web2.lookup(schema).stdout == "v1")
            #expect(try web2.store("v2", schema).status == 0)
            #expect(try web1.lookup(schema).stdout == "v2")
            let removed = try web3.lookup(schema)
            #expect(removed.status == 9 && removed.stdout.isEmpty, "\(removed)")

            // Any host by public key rotates for all.
            #expect(try web2.run(["fleet", "rotate"], schema).status == 0)
            #expect(try web1.lookup(schema).stdout == "v2")
            let status = try web1.run(["fleet", "status"], schema)
            #expect(status.stdout.contains("key epoch: 3") && status.stdout.contains("host: web-2 (public key, epoch 3)"), "\(status)")
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/etc/machine-id"), "needs a machine id"), arguments: ["file", "keyring", "tpm"])
    func aHostByItsDeviceKeyOnTheCommandLine(custody: String) async throws {
        // The keyring custody needs the private Secret Service of scripts/with-keyring.sh, the
        // TPM's the swtpm of scripts/services/swtpm.sh.
        let environment = ProcessInfo.processInfo.environment
        switch custody {
        case "keyring": guard environment["CREDVAULT_TEST_KEYRING"] == "unlocked" else { return }
        case "tpm": guard environment["CREDVAULT_TEST_TPM_TCTI"] != nil else { return }
        default: break
        }
        try await offThePool {
            let schema = TestCluster.freshSchema()
            let web1 = Host(name: "web-1"), web2 = Host(name: "web-2")
            #expect(try web1.run(["fleet", "init"], schema).status == 0)
            let device = ["--fleet-device-key", "--custody", custody] + (environment["CREDVAULT_TEST_TPM_TCTI"].map { ["--tpm-tcti", $0] } ?? [])
            let publicKey = try web2.run(["fleet", "public-key"] + device, schema)
            #expect(publicKey.status == 0 && publicKey.stdout.count == 65, "\(publicKey)")
            let added = try web1.run(["fleet", "add-host", "web-2", "--public-key", publicKey.stdout.trimmingCharacters(in: .whitespacesAndNewlines)], schema)
            #expect(added.status == 0, "\(added)")
            #expect(try web1.store("v1", schema).status == 0)
            #expect(try web1.run(["fleet", "rotate"], schema).stdout.contains("re-keyed by public key: web-2"))
            let read = try web2.run(["lookup", "--backend", "postgres"] + device + ["api.example", "deploy"], schema)
            #expect(read.status == 0 && read.stdout == "v1", "\(read)")
        }
    }

    /// A fleet with host web-2 enrolled by public key (its state in its own directory), which
    /// has stored one credential: it knows the fleet's key of epoch 1.
    struct EnrolledHost {
        let fleet: TestFleet
        let home = KeyFileDirectory()
        var configuration: PostgresConfiguration
        var secret: FleetHostSecret { FleetHostSecret.keyPair(home.keyFile) }

        init() throws {
            fleet = try TestFleet(freshness: .zero)
            try fleet.store.addHost("web-2", publicKey: try FleetHostSecret.publicKey(ofPrivateKeyFile: home.keyFile))
            configuration = fleet.configuration(freshness: .zero)
            configuration.stateDirectory = home.url
            try PostgresStore.open(configuration, host: "web-2", secret: secret).synchronous.save(
                Data("real".utf8), for: CredentialKey(service: "s", account: "a"), options: .portable)
        }

        /// What the database's administrator can do without any key of the fleet's: a data key
        /// of its own, sealed to web-2's public key (in its row) for `epoch`, with a matching
        /// state seal and no rows: a store of its making.
        func forgeAdministratorsStore(epoch: Int64) throws {
            let storeID = Data((0..<16).map { i in UInt8(fleet.store.storeID.dropFirst(2 * i).prefix(2), radix: 16)! })
            let forged = try FleetKeys(dataKey: SecureBytes.random(count: 32), storeID: storeID, keyEpoch: epoch)
            let publicKey = Array(try FleetHostSecret.publicKey(ofPrivateKeyFile: home.keyFile))
            let wrapping = HostWrapping.sealed(host: "web-2", publicKey: publicKey, dataKey: forged.dataKey, storeID: storeID, epoch: epoch)
            let generation = try TestCluster.psql("SELECT generation + 1 FROM \(fleet.schema).fleet_meta")
            let hex = { (data: Data) in "'\\x" + data.map { String(format: "%02x", $0) }.joined() + "'::bytea" }
            try TestCluster.psql(
                """
                BEGIN;
                DELETE FROM \(fleet.records);
                UPDATE \(fleet.schema).fleet_hosts SET key_epoch = \(epoch), wrapped_key = \(hex(wrapping.wrapped)) WHERE host = 'web-2';
                UPDATE \(fleet.schema).fleet_meta SET key_epoch = \(epoch), state_seal = \(hex(forged.stateSeal(generation: Int64(generation)!)));
                COMMIT
                """)
        }
    }

    @Test func aDataKeySealedToAHostByTheAdministratorIsNotBelievedByAHostThatKnewTheFleetsKey() async throws {
        try await offThePool {
            var web2 = try EnrolledHost()
            try web2.forgeAdministratorsStore(epoch: 2)
            #expect(throws: CredentialVaultError.tampered) { try PostgresStore.open(web2.configuration, host: "web-2", secret: web2.secret) }

            // What remains possible: a host that never knew a key of this store believes it.
            let fresh = KeyFileDirectory()
            web2.configuration.stateDirectory = fresh.url
            #expect(try PostgresStore.open(web2.configuration, host: "web-2", secret: web2.secret).keyEpoch == 2)
        }
    }

    @Test func acceptingARestoreDoesNotBelieveADataKeyTheAdministratorSealedToTheHost() async throws {
        try await offThePool {
            // The same epoch as the host knew (as anyone can seal to web-2): a "restored" store.
            let web2 = try EnrolledHost()
            try web2.forgeAdministratorsStore(epoch: 1)
            #expect(throws: CredentialVaultError.tampered) { try PostgresStore.open(web2.configuration, host: "web-2", secret: web2.secret) }
            // Told that the database was restored, the operator accepts it: the key is still not
            // the one this host knew, so nothing it stores next is sealed with the administrator's.
            #expect(throws: CredentialVaultError.tampered) { try PostgresStore.acceptRestore(web2.configuration, host: "web-2", secret: web2.secret) }
        }
    }

    @Test func aRotationDoesNotSealTheNewKeyToAPublicKeyTheAdministratorPutIn() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            let web2 = KeyFileDirectory()
            let web3 = KeyFileDirectory()
            try fleet.store.addHost("web-2", publicKey: try FleetHostSecret.publicKey(ofPrivateKeyFile: web2.keyFile))
            try fleet.store.addHost("web-3", publicKey: try FleetHostSecret.publicKey(ofPrivateKeyFile: web3.keyFile))
            // The administrator (no key of the fleet's) adds a host of its own by public key, and
            // puts its public key in web-2's row: rows anyone with the store's role can write.
            let attacker = KeyFileDirectory()
            let attackerKey = Array(try FleetHostSecret.publicKey(ofPrivateKeyFile: attacker.keyFile))
            let storeID = Data((0..<16).map { i in UInt8(fleet.store.storeID.dropFirst(2 * i).prefix(2), radix: 16)! })
            let own = HostWrapping.sealed(host: "evil", publicKey: attackerKey, dataKey: SecureBytes.random(count: 32), storeID: storeID, epoch: 1)
            let hex = { (data: Data) in "'\\x" + data.map { String(format: "%02x", $0) }.joined() + "'::bytea" }
            try TestCluster.psql(
                """
                INSERT INTO \(fleet.schema).fleet_hosts VALUES ('evil', 3, \(hex(own.salt)), 0, 0, 1, \(hex(own.wrapped)));
                UPDATE \(fleet.schema).fleet_hosts SET salt = \(hex(Data(attackerKey))) WHERE host = 'web-2'
                """)

            // The rotation after removing a host, as the documentation advises.
            let rotated = try fleet.store.rotateDataKey(hosts: ["test-host": .keyFile(fleet.keys.keyFile)])
            let secret = CredentialKey(service: "s", account: "after-rotation")
            try rotated.synchronous.save(Data("new secret".utf8), for: secret, options: .portable)
            #expect(try rotated.hosts().map(\.name) == ["test-host", "web-3"], "only the hosts enrolled by the fleet are re-keyed")
            var configuration = fleet.configuration(freshness: .zero)
            configuration.stateDirectory = attacker.url
            for host in ["evil", "web-2"] {
                let error = thrownError { () throws(CredentialVaultError) in
                    try PostgresStore.open(configuration, host: host, secret: .keyPair(attacker.keyFile)).synchronous.load(secret)
                }
                guard case .permissionDenied? = error else { return #expect(Bool(false), "\(host): \(String(describing: error))") }
            }
            configuration.stateDirectory = web3.url
            #expect(try PostgresStore.open(configuration, host: "web-3", secret: .keyPair(web3.keyFile)).synchronous.load(secret) == Data("new secret".utf8))
        }
    }

    @Test func aRotationFromAKeyFileHostKeepsThePublicKeyHostsAndNeedsItsOwnKey() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            let web2 = KeyFileDirectory()
            try fleet.store.addHost("web-2", publicKey: try FleetHostSecret.publicKey(ofPrivateKeyFile: web2.keyFile))
            #expect { try fleet.store.rotateDataKey() } throws: { error in
                guard case .invalidArgument = error as? CredentialVaultError else { return false }
                return true
            }
            let rotated = try fleet.store.rotateDataKey(hosts: ["test-host": .keyFile(fleet.keys.keyFile)])
            #expect(try rotated.hosts().map(\.keyKind) == ["key file", "public key"])
            var configuration = fleet.configuration(freshness: .zero)
            configuration.stateDirectory = web2.url
            #expect(try PostgresStore.open(configuration, host: "web-2", secret: .keyPair(web2.keyFile)).keyEpoch == 2)
            #expect(throws: CredentialVaultError.wrongPassphrase) {
                try PostgresStore.open(configuration, host: "web-2", secret: .keyPair(fleet.keys.keyFile))
            }
        }
    }

    @Test func hostsEnrolledByTheirDeviceKeyAreReKeyedByARotation() async throws {
        try await offThePool {
            let fleet = try TestFleet(freshness: .zero)
            let machineA = KeyFileDirectory(), machineB = KeyFileDirectory()
            let a = FleetHostSecret.device(DeviceIdentity(hostSecretURL: machineA.url.appendingPathComponent("host-secret"), machineID: "machine-a"))
            let b = FleetHostSecret.device(DeviceIdentity(hostSecretURL: machineB.url.appendingPathComponent("host-secret"), machineID: "machine-b"))
            try fleet.store.addHost("a", publicKey: try FleetHostSecret.publicKey(of: a))
            try fleet.store.addHost("b", publicKey: try FleetHostSecret.publicKey(of: b))
            func open(_ host: String, _ key: FleetHostSecret, _ state: KeyFileDirectory) throws -> PostgresStore {
                var configuration = fleet.configuration(freshness: .zero)
                configuration.stateDirectory = state.url
                return try PostgresStore.open(configuration, host: host, secret: key)
            }
            let key = CredentialKey(service: "s", account: "a")
            try open("a", a, machineA).synchronous.save(Data("from a".utf8), for: key, options: .portable)
            // Rotated from host a: a and b are re-keyed by their public keys, without their secrets.
            let rotated = try open("a", a, machineA).rotateDataKey()
            #expect(try rotated.hosts().map(\.name) == ["a", "b"])
            #expect(try open("b", b, machineB).synchronous.load(key) == Data("from a".utf8))
            // b's host secret on another machine (another machine id) is not b's key.
            let elsewhere = FleetHostSecret.device(DeviceIdentity(hostSecretURL: machineB.url.appendingPathComponent("host-secret"), machineID: "machine-c"))
            #expect(throws: CredentialVaultError.wrongPassphrase) { try open("b", elsewhere, machineB) }
        }
    }
}
