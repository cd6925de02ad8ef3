import CredentialVault
import CredentialVaultTestSupport
import Foundation
import Testing

@testable import CredentialVaultSecretService

/// A keyring file that cannot be trusted: every refusal is a typed error, and nothing is written
/// over what could not be read.
@Suite(.ownThread) struct LibsecretFileDamageTests {
    let key = CredentialKey(service: "api.example.com", account: "alice")

    @Test func aTamperedItemMACIsTamperedAndTheFileIsLeftAlone() async throws {
        let file = SecretToolFile()
        let store = try file.store()
        try store.synchronous.save(Data("kept".utf8), for: CredentialKey(service: "other.example", account: "bob"))
        try store.synchronous.save(Data("secret".utf8), for: key)
        var contents = try KeyringFileContents.parse(try file.bytes())
        contents.items[1].blob[contents.items[1].blob.count - 1] ^= 0x01
        try file.write(contents.serialized())
        let tampered = try file.bytes()
        expectThrows({ (error: CredentialVaultError) in error == .tampered }) { try store.synchronous.load(key) }
        expectThrows({ (error: CredentialVaultError) in error == .tampered }) { try store.synchronous.save(Data("new".utf8), for: key) }
        expectThrows({ (error: CredentialVaultError) in error == .tampered }) { try store.synchronous.delete(key) }
        #expect(try file.bytes() == tampered)
        #expect(try store.synchronous.load(CredentialKey(service: "other.example", account: "bob")) == Data("kept".utf8))
    }

    @Test func anotherKeyIsWrongPassphraseNotAnEmptyKeyring() async throws {
        let file = SecretToolFile()
        try file.store().synchronous.save(Data("secret".utf8), for: key)
        let before = try file.bytes()
        var configuration = file.configuration()
        configuration.keySource = .password(SecureBytes(copying: Array("not the password".utf8)))
        let other = try LibsecretFileStore(configuration: configuration)
        expectThrows({ (error: CredentialVaultError) in error == .wrongPassphrase }) { try other.synchronous.load(key) }
        expectThrows({ (error: CredentialVaultError) in error == .wrongPassphrase }) { try other.synchronous.save(Data("x".utf8), for: key) }
        expectThrows({ (error: CredentialVaultError) in error == .wrongPassphrase }) { try other.synchronous.listKeys() }
        #expect(try file.bytes() == before)
    }

    @Test(arguments: [1, 17, 18, 40, 200])
    func aTruncatedFileIsCorruptedAndNotOverwritten(keeping: Int) async throws {
        let file = SecretToolFile()
        let store = try file.store()
        try store.synchronous.save(Data("secret".utf8), for: key)
        let whole = try file.bytes()
        try file.write(Array(whole.prefix(min(keeping, whole.count - 1))))
        let truncated = try file.bytes()
        expectThrows(\CredentialVaultError.isCorrupted) { try store.synchronous.load(key) }
        expectThrows(\CredentialVaultError.isCorrupted) {
            try store.synchronous.save(Data("new".utf8), for: key)
        }
        #expect(try file.bytes() == truncated)
    }

    @Test func aPortalSecretMustBeSixtyFourBytes() {
        expectThrows(\CredentialVaultError.isInvalidArgument) {
            try LibsecretFileStore(configuration: LibsecretFileConfiguration(path: "/nonexistent/k", keySource: .portalSecret(SecureBytes(count: 32))))
        }
    }

    @Test func aPortalSecretOpensWhatItWrote() throws {
        let directory = TempDirectory()
        let portal = SecureBytes.random(count: 64)
        let configuration = LibsecretFileConfiguration(path: directory.path("keyrings/default.keyring").path, keySource: .portalSecret(portal))
        try LibsecretFileStore(configuration: configuration).synchronous.save(Data("v".utf8), for: key)
        #expect(try LibsecretFileStore(configuration: configuration).synchronous.load(key) == Data("v".utf8))
        let contents = try KeyringFileContents.parse(Array(try Data(contentsOf: directory.path("keyrings/default.keyring"))))
        #expect(contents.salt.count == 32)
        #expect(contents.iterations == 100_000)
    }
}

/// Parameters a hostile file could use to make a reader spin or derive a weak key, and the
/// lock shared by CredentialVault's writers.
@Suite(.ownThread) struct LibsecretFileParameterTests {
    let key = CredentialKey(service: "api.example.com", account: "alice")

    @Test(arguments: [UInt32(1), 99_999, 10_000_001, .max])
    func anIterationCountOutOfRangeIsCorruptedBeforeAnyDerivation(iterations: UInt32) async throws {
        let file = SecretToolFile()
        try file.store().synchronous.save(Data("secret".utf8), for: key)
        var contents = try KeyringFileContents.parse(try file.bytes())
        contents.iterations = iterations
        try file.write(contents.serialized())
        expectThrows(\CredentialVaultError.isCorrupted) { try file.store().synchronous.load(key) }
    }

    @Test func aSaltShorterThanThirtyTwoBytesOrUnlikeItsRecordedSizeIsCorrupted() throws {
        var contents = KeyringFileContents.empty(now: 0)
        contents.salt = Array(contents.salt.prefix(16))
        expectThrows(\CredentialVaultError.isCorrupted) { try KeyringFileContents.parse(contents.serialized()) }
        var mismatched = KeyringFileContents.empty(now: 0).serialized()
        mismatched[KeyringFileLayout.prefixCount] = 33  // the recorded salt size (u32, little-endian)
        expectThrows(\CredentialVaultError.isCorrupted) { try KeyringFileContents.parse(mismatched) }
    }

    @Test func anotherVersionOfTheFormatIsUnsupported() {
        var bytes = KeyringFileContents.empty(now: 0).serialized()
        bytes[KeyringFileLayout.header.count] = 0
        expectThrows(\CredentialVaultError.isUnsupported) { try KeyringFileContents.parse(bytes) }
    }

    @Test func aWriterHoldingTheLockPastTheTimeoutIsBusyAndNothingIsWritten() throws {
        let file = SecretToolFile()
        try file.store().synchronous.save(Data("before".utf8), for: key)
        let before = try file.bytes()
        let directory = try #require(try PrivateDirectory.open(file.directory.path("keyrings").path, owners: .notWritableByOthers))
        let held = try KeyringFileLock.acquire(beside: FileLocation("default.keyring", in: directory), until: .now + .seconds(5))
        defer { held.release() }
        var configuration = file.configuration()
        configuration.lockTimeout = .milliseconds(200)
        let store = try LibsecretFileStore(configuration: configuration)
        #expect(throws: CredentialVaultError.busy) { try store.synchronous.save(Data("after".utf8), for: key) }
        #expect(try file.bytes() == before)
        #expect(try store.synchronous.load(key) == Data("before".utf8), "reads take no lock")
    }
}
