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
/// files in the host state directory (`<state>/credential-vault/counters/<vault id>.<reference>`, 0600 in
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

    /// Makes a new counter file at 0, under a fresh random `reference` (never 0): a counter made
    /// again for the same vault (moved away and back, or made by `acceptRestore` after it went
    /// missing) restarts at 0, and under the old name it would accept a copy of the vault that
    /// carries a value the new counter reaches again. Under a new name, such a copy names a
    /// counter that is gone, and is refused.
    public func createCounter(vaultID: [UInt8], binding: SecureBytes) throws(CredentialVaultError) -> RollbackCounter {
        let reference = Self.freshReference()
        try write(0, vaultID: vaultID, reference: reference)
        return RollbackCounter(reference: reference, value: 0)
    }

    /// The counter's value; `nil` when its file (or directory) is missing.
    public func readCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) -> UInt64? {
        let name = Self.name(vaultID, reference: reference)
        let damaged = { (size: String) -> CredentialVaultError in
            .io("the rollback counter \(countersPath)/\(name) is damaged (\(size) bytes, not 8)")
        }
        let read: [UInt8]?
        do {
            read = try readState(name, limit: 64)
        } catch .corrupted {
            // Larger than the limit: the counter's damage, not the vault's.
            throw damaged("more than 64")
        }
        guard let bytes = read else { return nil }
        guard bytes.count == 8 else { throw damaged("\(bytes.count)") }
        return bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            return reader.u64() ?? 0
        }
    }

    /// Adds one, durably (a new file renamed over the old one, then the directory synced).
    public func incrementCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        guard let value = try readCounter(vaultID: vaultID, reference: reference, binding: binding) else {
            throw .notAvailable("the rollback counter \(countersPath)/\(Self.name(vaultID, reference: reference)) is missing")
        }
        guard value < UInt64.max else { throw .invalidArgument("the rollback counter is at its maximum") }
        try write(value + 1, vaultID: vaultID, reference: reference)
    }

    /// Removes the counter file.
    public func removeCounter(vaultID: [UInt8], reference: UInt32, binding: SecureBytes) throws(CredentialVaultError) {
        guard let directory = try PrivateDirectory.open(countersPath) else { return }
        guard unlinkat(directory.fd, Self.name(vaultID, reference: reference), 0) == 0 || errno == ENOENT else {
            throw PrivateFiles.error(errno, "cannot remove the rollback counter of this vault")
        }
        try directory.sync()
    }

    private var countersPath: String { directory.appendingPathComponent("counters").path }

    private func write(_ value: UInt64, vaultID: [UInt8], reference: UInt32) throws(CredentialVaultError) {
        var w = ByteWriter(capacity: 8)
        w.u64(value)
        try writeState(Self.name(vaultID, reference: reference), w.bytes)
    }

    /// The bytes of the state file `name` beside the counters (a rollback counter, or another
    /// high-water mark this machine keeps, such as the fleet store's); `nil` when it (or its
    /// directory) is missing. Same protection as the counters: 0600 in 0700 directories.
    package func readState(_ name: String, limit: Int) throws(CredentialVaultError) -> [UInt8]? {
        guard let directory = try PrivateDirectory.open(countersPath) else { return nil }
        return try PrivateFiles.read(FileLocation(name, in: directory), limit: limit)
    }

    /// Replaces the state file `name` beside the counters, durably (a new file renamed over
    /// the old one, then the directory synced).
    package func writeState(_ name: String, _ bytes: [UInt8]) throws(CredentialVaultError) {
        let directory = try PrivateDirectory.create(countersPath)
        try AtomicFile.write(bytes, to: FileLocation(name, in: directory))
    }

    /// The counter's file name: the vault id and the reference in hex. With reference 0 (which
    /// no counter has), the vault id alone: the stem of the vault's `.protected` mark.
    package static func name(_ vaultID: [UInt8], reference: UInt32 = 0) -> String {
        let id = hex(vaultID)
        guard reference != 0 else { return id }
        return id + "." + hex([UInt8(reference >> 24), UInt8(reference >> 16 & 0xff), UInt8(reference >> 8 & 0xff), UInt8(reference & 0xff)])
    }

    /// A random counter reference, never 0 (a commit record naming 0 is refused).
    package static func freshReference() -> UInt32 {
        while true {
            let reference = Crypto.randomBytes(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            if reference != 0 { return reference }
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    /// Records (`protected`) or forgets that the vault `vaultID` has a rollback counter: an
    /// empty `counters/<vault id>.protected`, made durably. A copy of the vault without a
    /// counter is refused while it is there (see `SealedFileConfiguration.isMarkedRollbackProtected`).
    func mark(_ vaultID: [UInt8], protected: Bool) throws(CredentialVaultError) {
        let name = Self.name(vaultID) + ".protected"
        if protected {
            let directory = try PrivateDirectory.create(countersPath)
            _ = try AtomicFile.create([], at: FileLocation(name, in: directory))  // false: it was there already
        } else if let directory = try PrivateDirectory.open(countersPath) {
            guard unlinkat(directory.fd, name, 0) == 0 || errno == ENOENT else {
                throw PrivateFiles.error(errno, "cannot remove the rollback protection mark of this vault")
            }
            try directory.sync()
        }
    }

    /// Whether `mark` recorded the vault: the mark's name exists (whatever it is: anything an
    /// attacker puts there can only make a copy be refused, never accepted). Fails closed: a
    /// counters directory that cannot be trusted to answer (a symbolic link, another user's,
    /// open to others, unreadable) throws, as it could hide a mark; only a directory or a mark
    /// that does not exist answers `false`.
    func isMarked(_ vaultID: [UInt8]) throws(CredentialVaultError) -> Bool {
        var info = stat()
        if lstat(countersPath, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
            throw .permissionDenied(
                "\(countersPath) is not a directory (a symbolic link?): whether this vault must have a rollback counter cannot be checked, so it was not opened")
        }
        guard let directory = try PrivateDirectory.open(countersPath) else { return false }
        if fstatat(directory.fd, Self.name(vaultID) + ".protected", &info, AT_SYMLINK_NOFOLLOW) == 0 { return true }
        guard errno == ENOENT else {
            throw PrivateFiles.error(errno, "cannot check whether this vault must have a rollback counter (\(countersPath))")
        }
        return false
    }
}
