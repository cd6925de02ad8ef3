import CredentialVault
import Foundation
import Testing

/// What every custodian must give a sealed-file vault, written once and run by the tests of
/// each (the host-secret file here, the login keyring in CredentialVaultSecretService's tests,
/// the TPM in CredentialVaultTPM's): device-only values that open only through the custodian,
/// an older copy of the vault refused (`rolledBack`), a deliberate restore accepted, and moves
/// between custodians that lose nothing.
public enum CustodySuite {
    /// The checks, for a parametrized test:
    ///
    /// ```swift
    /// @Test(arguments: CustodySuite.Check.allCases)
    /// func custody(_ check: CustodySuite.Check) throws { try CustodySuite.run(check, on: mySetup()) }
    /// ```
    public enum Check: String, CaseIterable, Sendable, CustomStringConvertible {
        case createsAndReopens, refusesAnOlderCopy, everySaveAdvancesTheCounter, movesBetweenCustodians,
            keyChangesAndRotationKeepCustody

        /// The check's name.
        public var description: String { rawValue }
    }

    /// Runs `check` on `setup`.
    public static func run(_ check: Check, on setup: Setup) throws {
        switch check {
        case .createsAndReopens: try createsAndReopens(setup)
        case .refusesAnOlderCopy: try refusesAnOlderCopy(setup)
        case .everySaveAdvancesTheCounter: try everySaveAdvancesTheCounter(setup)
        case .movesBetweenCustodians: try movesBetweenCustodians(setup)
        case .keyChangesAndRotationKeepCustody: try keyChangesAndRotationKeepCustody(setup)
        }
    }

    /// A vault under test: `configuration` offers the custodian (and sets `custody` to it);
    /// `directory` is a private scratch directory the check may fill.
    public struct Setup: Sendable {
        /// The configuration new vaults are made with.
        public var configuration: SealedFileConfiguration
        /// A scratch directory (0700) for the vault and its copies.
        public var directory: URL
        /// What unlocks the vault.
        public var secret: VaultSecret

        /// A setup for one check.
        public init(configuration: SealedFileConfiguration, directory: URL, secret: VaultSecret) {
            self.configuration = configuration
            self.directory = directory
            self.secret = secret
        }

        var vaultURL: URL { directory.appendingPathComponent("custody.cvault") }

        /// A setup in a new private directory under `$TMPDIR`, with its own host secret (a
        /// machine of its own) and `custody` made by `custodians`, vault key a passphrase with
        /// the cheapest KDF. `remove()` it afterwards.
        public static func scratch(custody: DeviceCustody, custodians: [any DeviceCustodian]) throws -> Setup {
            let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            var template = Array("\(base)/cv-custody-XXXXXX".utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                throw CredentialVaultError.io("cannot make a scratch directory in \(base)")
            }
            let directory = URL(fileURLWithPath: String(cString: made))
            var configuration = SealedFileConfiguration(
                device: DeviceIdentity(hostSecretURL: directory.appendingPathComponent("state/host-secret"), machineID: "custody-suite"))
            configuration.custody = custody
            configuration.custodians = custodians
            return Setup(configuration: configuration, directory: directory, secret: .passphrase("custody suite"))
        }

        /// Removes the scratch directory.
        public func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    static let portable = CredentialKey(service: "custody", account: "portable")
    static let deviceOnly = CredentialKey(service: "custody", account: "device-only")

    /// Creates the vault with a rollback counter, saves, and checks custody, format and values.
    @discardableResult
    public static func createsAndReopens(_ setup: Setup) throws -> SealedFileStore {
        var configuration = setup.configuration
        configuration.rollbackCounter = true
        let store = try SealedFileStore.create(at: setup.vaultURL, secret: setup.secret, kdf: .insecureTestingOnly, configuration: configuration)
        #expect(store.custody == configuration.custody)
        #expect(store.hasRollbackCounter)
        #expect(store.formatVersion == "1.0")
        try store.save(Data("portable".utf8), for: portable, options: .portable)
        try store.save(Data("device".utf8), for: deviceOnly, options: .default)
        let again = try SealedFileStore.open(at: setup.vaultURL, secret: setup.secret, configuration: configuration)
        #expect(try again.load(deviceOnly) == Data("device".utf8))
        #expect(try again.load(portable) == Data("portable".utf8))
        let locked = try LockedVault(url: setup.vaultURL)
        #expect(locked.custody == configuration.custody && locked.hasRollbackCounter)
        return again
    }

    /// An older copy put back (in place, as `cp` does, and by rename) is refused, by a new open
    /// and by a store that was open all along; `acceptRestore` takes it, after which the newer
    /// copy is refused in turn.
    public static func refusesAnOlderCopy(_ setup: Setup) throws {
        let store = try createsAndReopens(setup)
        let older = try Data(contentsOf: setup.vaultURL)
        try store.save(Data("revoked".utf8), for: portable, options: .portable)
        _ = try store.take(deviceOnly)
        let newer = try Data(contentsOf: setup.vaultURL)
        try writeInPlace(older, to: setup.vaultURL)
        expectRolledBack { _ = try SealedFileStore.open(at: setup.vaultURL, secret: setup.secret, configuration: setup.configuration) }
        expectRolledBack { _ = try store.load(portable) }
        expectRolledBack { try store.save(Data("x".utf8), for: portable, options: .portable) }
        // Nothing was changed by the refusals: the file is still the older copy.
        #expect(try Data(contentsOf: setup.vaultURL) == older)

        let restored = try SealedFileStore.acceptRestore(at: setup.vaultURL, secret: setup.secret, configuration: setup.configuration)
        #expect(try restored.load(portable) == Data("portable".utf8))
        #expect(try restored.load(deviceOnly) == Data("device".utf8))
        try replaceByRename(newer, at: setup.vaultURL)
        expectRolledBack { _ = try SealedFileStore.open(at: setup.vaultURL, secret: setup.secret, configuration: setup.configuration) }
        try replaceByRename(older, at: setup.vaultURL)
        expectRolledBack { _ = try SealedFileStore.open(at: setup.vaultURL, secret: setup.secret, configuration: setup.configuration) }
    }

    /// Saves keep the counter in step: many saves, reopened, still accepted; the copy from
    /// just one save back is refused.
    public static func everySaveAdvancesTheCounter(_ setup: Setup) throws {
        let store = try createsAndReopens(setup)
        for i in 0..<5 { try store.save(Data("v\(i)".utf8), for: portable, options: .portable) }
        let oneBack = try Data(contentsOf: setup.vaultURL)
        try store.save(Data("last".utf8), for: portable, options: .portable)
        let reopened = try SealedFileStore.open(at: setup.vaultURL, secret: setup.secret, configuration: setup.configuration)
        #expect(try reopened.load(portable) == Data("last".utf8))
        try writeInPlace(oneBack, to: setup.vaultURL)
        expectRolledBack { _ = try SealedFileStore.open(at: setup.vaultURL, secret: setup.secret, configuration: setup.configuration) }
    }

    /// Moves the vault to the host-secret file and back: values, device-only ones included,
    /// survive; after the move the old custody's counter no longer guards it, the new one does.
    public static func movesBetweenCustodians(_ setup: Setup) throws {
        let store = try createsAndReopens(setup)
        try store.changeCustody(to: .file, secret: setup.secret, rollbackCounter: true)
        #expect(store.custody == .file)
        var fileConfiguration = setup.configuration
        fileConfiguration.custodians = []
        let asFile = try SealedFileStore.open(at: setup.vaultURL, secret: setup.secret, configuration: fileConfiguration)
        #expect(try asFile.load(deviceOnly) == Data("device".utf8))
        let mover = try SealedFileStore.open(at: setup.vaultURL, secret: setup.secret, configuration: setup.configuration)
        try mover.changeCustody(to: setup.configuration.custody, secret: setup.secret)
        let back = try SealedFileStore.open(at: setup.vaultURL, secret: setup.secret, configuration: setup.configuration)
        #expect(back.custody == setup.configuration.custody)
        #expect(try back.load(deviceOnly) == Data("device".utf8))
        #expect(try back.load(portable) == Data("portable".utf8))
        if setup.configuration.custody != .file {
            // Never with the file alone once the custodian holds it.
            #expect(throws: CredentialVaultError.self) {
                _ = try SealedFileStore.open(at: setup.vaultURL, secret: setup.secret, configuration: fileConfiguration).load(deviceOnly)
            }
        }
    }

    /// `changeSecret` (`credvault passwd`) and `rotateDataKey` keep the custody and the counter: the
    /// vault reopens under its custodian with every value, and an older copy is still refused.
    public static func keyChangesAndRotationKeepCustody(_ setup: Setup) throws {
        let store = try createsAndReopens(setup)
        let older = try Data(contentsOf: setup.vaultURL)
        let newKey = VaultSecret.passphrase("custody suite, changed")
        try store.changeSecret(from: setup.secret, to: newKey, kdf: .insecureTestingOnly)
        try store.rotateDataKey(secret: newKey)
        let reopened = try SealedFileStore.open(at: setup.vaultURL, secret: newKey, configuration: setup.configuration)
        #expect(reopened.custody == setup.configuration.custody && reopened.hasRollbackCounter)
        #expect(try reopened.load(deviceOnly) == Data("device".utf8))
        #expect(try reopened.load(portable) == Data("portable".utf8))
        try writeInPlace(older, to: setup.vaultURL)
        expectRolledBack { _ = try SealedFileStore.open(at: setup.vaultURL, secret: setup.secret, configuration: setup.configuration) }
    }

    /// Records an issue unless `body` throws `rolledBack`; `what` names the attempt.
    public static func expectRolledBack(_ what: String = "", sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        let named = what.isEmpty ? "" : ": \(what)"
        do {
            try body()
            Issue.record("expected rolledBack, it succeeded\(named)", sourceLocation: sourceLocation)
        } catch CredentialVaultError.rolledBack {
        } catch {
            Issue.record("expected rolledBack, got \(error)\(named)", sourceLocation: sourceLocation)
        }
    }

    /// Overwrites the file's bytes without replacing it (same inode), as `cp` does.
    static func writeInPlace(_ data: Data, to url: URL) throws {
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: data)
        try handle.close()
    }

    /// `writeInPlace`, for tests that edit a custodian's files.
    public static func writeInPlaceForTests(_ data: Data, to url: URL) throws { try writeInPlace(data, to: url) }

    /// Replaces the file by a new one with `data` (as a restore tool or `mv` does).
    static func replaceByRename(_ data: Data, at url: URL) throws {
        let temp = url.deletingLastPathComponent().appendingPathComponent(".restore-\(UUID().uuidString)")
        try data.write(to: temp)
        _ = chmod(temp.path, 0o600)
        _ = rename(temp.path, url.path)
    }
}
