#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The custodian of machines without a TPM or keyring: the device key comes from the host
/// secret and the machine id alone (today's device key, unchanged), and rollback counters are
/// files in the host state directory (`<state>/credential-vault/counters/<vault id>`, 0600 in
/// 0700 directories, replaced atomically through the checked directory).
///
/// What its counter defends against: a vault file put back from a backup, a snapshot or a copy
/// on its own, while the state directory keeps its newer counter. Not against anyone who can
/// write the user's files (they can roll the counter back too), nor a restore of the whole
/// home directory with the state directory in it (then vault and counter agree). The keyring
/// and TPM custodians defend better; a TPM counter never goes back.
public struct HostFileCustodian: DeviceCustodian {
    /// The directory that holds the counters' directory (the host secret's).
    public let directory: URL

    /// The custodian whose counters live in `directory/counters`.
    public init(directory: URL) {
        self.directory = directory
    }

    /// The host-secret file custody.
    public var custody: DeviceCustody { .file }

    /// This custodian holds no secret of its own: the host secret is the whole device secret.
    public func deviceSecret(binding: SecureBytes, create: Bool) throws(CredentialVaultError) -> SecureBytes {
        throw .unsupported("the host-secret file custodian holds no device secret besides the host secret")
    }

    /// Makes the counter file at 0 (or keeps an existing one's value: a counter never goes back).
    public func createCounter(vaultID: [UInt8], binding: SecureBytes) throws(CredentialVaultError) -> RollbackCounter {
        if let value = try readCounter(vaultID: vaultID, reference: 0, binding: binding) {
            return RollbackCounter(reference: 0, value: value)
        }
        try write(0, vaultID: vaultID)
        return RollbackCounter(reference: 0, value: 0)
    }

    /// The counter's value; `nil` when its file (or directory) is missing.
    public func readCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) -> UInt64? {
        guard let directory = try PrivateDirectory.open(countersPath),
            let bytes = try PrivateFiles.read(FileLocation(Self.name(vaultID), in: directory), limit: 64)
        else { return nil }
        guard bytes.count == 8 else {
            throw .io("the rollback counter \(countersPath)/\(Self.name(vaultID)) is damaged (\(bytes.count) bytes, not 8)")
        }
        return bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            return reader.u64() ?? 0
        }
    }

    /// Adds one, durably (a new file renamed over the old one, then the directory synced).
    public func incrementCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        guard let value = try readCounter(vaultID: vaultID, reference: reference, binding: binding) else {
            throw .notAvailable("the rollback counter \(countersPath)/\(Self.name(vaultID)) is missing")
        }
        guard value < UInt64.max else { throw .invalidArgument("the rollback counter is at its maximum") }
        try write(value + 1, vaultID: vaultID)
    }

    /// Removes the counter file.
    public func removeCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        guard let directory = try PrivateDirectory.open(countersPath) else { return }
        guard unlinkat(directory.fd, Self.name(vaultID), 0) == 0 || errno == ENOENT else {
            throw PrivateFiles.error(errno, "cannot remove the rollback counter of this vault")
        }
        try directory.sync()
    }

    private var countersPath: String { directory.appendingPathComponent("counters").path }

    private func write(_ value: UInt64, vaultID: [UInt8]) throws(CredentialVaultError) {
        let directory = try PrivateDirectory.create(countersPath)
        var w = ByteWriter(capacity: 8)
        w.u64(value)
        try AtomicFile.write(w.bytes, to: FileLocation(Self.name(vaultID), in: directory))
    }

    /// The counter's file name: the vault id in hex.
    package static func name(_ vaultID: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: vaultID.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }
}
