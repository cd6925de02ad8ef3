import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// Secrets never appear in error messages, `description`, `debugDescription` or `dump` output,
/// whatever goes wrong (wrong passphrase, damaged file, device mismatch, busy, bad arguments).
@Suite(.ownThread) final class SecretLeakTests {
    let dir = TempDirectory()
    let value = MaskedSecret(count: 64)
    let passphrase = MaskedSecret(count: 40)

    private func key(_ secret: MaskedSecret) -> VaultSecret {
        var bytes = secret.data()
        defer { wipe(&bytes) }
        return bytes.withUnsafeBytes { .passphrase(SecureBytes(copying: $0)) }
    }

    private func expectNoLeak(_ text: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!value.leaks(into: text), "\(what) shows the stored value", sourceLocation: sourceLocation)
        #expect(!passphrase.leaks(into: text), "\(what) shows the passphrase", sourceLocation: sourceLocation)
    }

    /// Every rendering of an error or value a program might log.
    private func renderings(_ subject: Any) -> [String] {
        var dumped = ""
        dump(subject, to: &dumped)
        return [String(describing: subject), String(reflecting: subject), dumped]
            + ((subject as? Error).map { [$0.localizedDescription, "\($0)"] } ?? [])
    }

    @Test func errorsOfEveryKindCarryNoSecret() throws {
        let store = try SealedFileStore.create(
            at: dir.path("v/vault.cvault"), secret: key(passphrase), kdf: TestVault.kdf, configuration: TestVault.configuration(dir))
        var data = value.data()
        try store.save(data, for: CredentialKey(service: "s", account: "device"), options: .default)
        try store.save(data, for: CredentialKey(service: "s", account: "portable"), options: .portable)
        wipe(&data)
        var errors: [CredentialVaultError] = []
        func collect(_ body: () throws -> Void) {
            do { try body() } catch let error as CredentialVaultError { errors.append(error) } catch {
                Issue.record("unexpected error type: \(type(of: error))")
            }
        }
        collect { _ = try SealedFileStore.open(at: store.url, secret: .passphrase("wrong"), configuration: TestVault.configuration(dir)) }
        collect { _ = try SealedFileStore.open(at: store.url, secret: .device, configuration: TestVault.configuration(dir)) }
        collect {
            let elsewhere = try SealedFileStore.open(at: store.url, secret: self.key(self.passphrase), configuration: TestVault.configuration(self.dir, device: "other"))
            _ = try elsewhere.load(CredentialKey(service: "s", account: "device"))
        }
        collect { try store.changeSecret(from: .passphrase("wrong"), to: .passphrase("new"), kdf: TestVault.kdf) }
        collect { try store.save(Data(), for: CredentialKey(service: "", account: "a"), options: .default) }
        collect { try store.save(Data(count: (64 << 20) + 1), for: CredentialKey(service: "s", account: "big"), options: .default) }
        var bytes = try TestVault.bytes(store.url)
        let intact = bytes
        bytes[bytes.count - 40] ^= 1
        try TestVault.write(bytes, to: store.url)
        collect { _ = try SealedFileStore.open(at: store.url, secret: self.key(self.passphrase), configuration: TestVault.configuration(self.dir)) }
        try TestVault.write(Array(intact.prefix(100)), to: store.url)
        collect { _ = try SealedFileStore.open(at: store.url, secret: self.key(self.passphrase), configuration: TestVault.configuration(self.dir)) }
        try TestVault.write(intact, to: store.url)
        collect { _ = try KDFParameters(opsLimit: 1 << 40, memLimitBytes: 1) }
        let kinds = Set(errors.map { Mirror(reflecting: $0).children.first?.label ?? "\($0)" })
        #expect(kinds.count >= 5, "several kinds of failure were tried: \(kinds)")
        for error in errors {
            for text in renderings(error) { expectNoLeak(text, "the error '\(error)'") }
        }
    }

    @Test func theCheckSeesASecretAsTextAndAsHex() {
        #expect(value.leaks(into: "before \(value.string()) after"))
        let hex = value.data().map { String(format: "%02X", $0) }.joined()
        #expect(value.leaks(into: "bytes: \(hex)"))
        #expect(!value.leaks(into: "SecureBytes(64 bytes, redacted)"))
    }

    @Test func descriptionsAndDumpsOfSecretHoldersAreRedacted() throws {
        let store = try SealedFileStore.create(
            at: dir.path("v/vault.cvault"), secret: key(passphrase), kdf: TestVault.kdf, configuration: TestVault.configuration(dir))
        let memory = InMemoryStore()
        var data = value.data()
        try store.save(data, for: CredentialKey(service: "s", account: "a"), options: .portable)
        try memory.save(data, for: CredentialKey(service: "s", account: "a"), options: .portable)
        let secure = data.withUnsafeBytes { SecureBytes(copying: $0) }
        let sealingKey = try SealingKey(copying: SecureBytes(copying: [UInt8](repeating: 7, count: 32)))
        wipe(&data)
        let subjects: [(String, Any)] = [
            ("SealedFileStore", store), ("InMemoryStore", memory), ("SecureBytes", secure),
            ("VaultSecret.passphrase", key(passphrase)), ("SealingKey", sealingKey),
            ("CredentialMetadata", try store.metadata(for: CredentialKey(service: "s", account: "a")) as Any),
        ]
        for (name, subject) in subjects {
            for text in renderings(subject) { expectNoLeak(text, name) }
        }
    }
}
