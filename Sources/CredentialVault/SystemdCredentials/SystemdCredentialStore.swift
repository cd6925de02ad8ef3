#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A read-only store over the credentials systemd passes to a service
/// (`LoadCredential=`, `LoadCredentialEncrypted=`, `SetCredential=`, `ImportCredential=`): the
/// files of `$CREDENTIALS_DIRECTORY`, decrypted by systemd, so that a service reads them
/// through the protocol it uses elsewhere. Names map to keys as `SystemdCredentialNaming` says.
///
/// **Read-only.** `save`, `take`, `delete` and `deleteAll` throw `unsupported` (after checking
/// their arguments, as every backend does): the credentials are the unit's, set in its unit
/// file; nothing here changes them.
///
/// **Hostile files.** The directory is opened once and checked with `fstat` on its descriptor
/// (a directory owned by this user or root, writable by its owner only, nothing for others);
/// every credential is opened relative to that descriptor, with `O_NOFOLLOW | O_NONBLOCK`, and
/// checked with `fstat` before a byte is read: a regular file (a symbolic link, FIFO, socket,
/// device or directory is refused with `invalidArgument`, without blocking), owned by this user
/// or root (`permissionDenied` otherwise), not writable by group or others and not readable by
/// others (`permissionDenied`), at most `sizeLimit` bytes (`invalidArgument`). Values are read
/// straight into guarded memory (`SecureBytes`) and copied once into the returned `Data`.
/// `listKeys` lists the regular files only (other entries are not credentials).
public final class SystemdCredentialStore: Sendable {
    /// The variable systemd sets to the directory: `CREDENTIALS_DIRECTORY`.
    public static let environmentVariable = "CREDENTIALS_DIRECTORY"
    /// systemd's own limit on a credential (`CREDENTIAL_SIZE_MAX`, 1 MiB): the default `sizeLimit`.
    public static let defaultSizeLimit = 1 << 20

    /// How credential names map to keys.
    public let naming: SystemdCredentialNaming
    /// The largest credential read (bytes); a larger file is refused.
    public let sizeLimit: Int
    /// The directory, as it was opened (for messages).
    public var path: String { directory.path }

    let directory: PrivateDirectory
    /// The thread the async API reads on (the cooperative pool never waits for a file).
    let threads = StoreThreads(name: "cv-systemd-cred")

    /// Opens the credentials directory at `path` (absolute). Throws `notAvailable` when there is
    /// none, `permissionDenied` when its owner or mode is wrong (see the type), and
    /// `invalidArgument` for a relative path or a `sizeLimit` outside 0 ... 1 GiB.
    public init(
        directory path: String, naming: SystemdCredentialNaming = SystemdCredentialNaming(), sizeLimit: Int = defaultSizeLimit
    ) throws(CredentialVaultError) {
        guard path.hasPrefix("/") else { throw .invalidArgument("the credentials directory must be an absolute path") }
        guard (0...(1 << 30)).contains(sizeLimit) else { throw .invalidArgument("the size limit must be between 0 and 1 GiB") }
        guard let directory = try PrivateDirectory.open(path, owners: .systemProvided) else {
            throw .notAvailable("the credentials directory \(path) does not exist")
        }
        self.directory = directory
        self.naming = naming
        self.sizeLimit = sizeLimit
    }

    /// The store over `$CREDENTIALS_DIRECTORY` of `environment`; `nil` when the variable is not
    /// set (the process was not started by systemd with credentials). Throws as `init` does.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment,
        naming: SystemdCredentialNaming = SystemdCredentialNaming(), sizeLimit: Int = defaultSizeLimit
    ) throws(CredentialVaultError) -> SystemdCredentialStore? {
        guard let path = environment[environmentVariable], !path.isEmpty else { return nil }
        return try SystemdCredentialStore(directory: path, naming: naming, sizeLimit: sizeLimit)
    }

    /// The error every write gets.
    static func readOnly(_ operation: String) -> CredentialVaultError {
        .unsupported(
            "systemd credentials are read-only (\(operation)): they are set in the unit file (LoadCredential=, SetCredential=); use another backend to store credentials")
    }

    /// The value of the credential file `name`, `nil` when there is none (see the type's checks).
    func read(_ name: String) throws(CredentialVaultError) -> Data? {
        // One component, never `.` or `..`: `openat` beneath the directory's descriptor then
        // cannot leave it (and O_NOFOLLOW refuses a link in its place).
        guard SystemdCredentialNaming.isValidName(name) else { return nil }
        let location = FileLocation(name, in: directory)
        guard let secret = try SecretFile.read(location, what: "the systemd credential", limit: sizeLimit, owners: .systemProvided) else {
            return nil
        }
        return secret.withUnsafeBytes { Data($0) }
    }

    /// `fstat` of the credential file `name` after the same open and checks as a read; `nil`
    /// when there is none. Nothing is read.
    func inspect(_ name: String) throws(CredentialVaultError) -> stat? {
        guard SystemdCredentialNaming.isValidName(name) else { return nil }
        let rules = PrivateFiles.Rules(limit: sizeLimit, owners: .systemProvided)
        guard let (fd, info) = try PrivateFiles.open(FileLocation(name, in: directory), rules: rules) else { return nil }
        close(fd)
        return info
    }

    /// The names of the regular files in the directory that can be credential names (`lstat`:
    /// links are not followed, and other entries are left out).
    func credentialNames() throws(CredentialVaultError) -> [String] {
        var names: [String] = []
        for name in directory.names() where SystemdCredentialNaming.isValidName(name) {
            if let info = try FileLocation(name, in: directory).status(), info.st_mode & S_IFMT == S_IFREG { names.append(name) }
        }
        return names
    }
}
