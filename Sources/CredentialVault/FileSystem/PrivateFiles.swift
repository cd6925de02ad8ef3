#if canImport(Glibc)
import Glibc
#endif

/// POSIX file handling for secrets: files opened without following a link and checked with
/// `fstat` before a byte is read, bounded reads, and errors that say what to do. Errors carry
/// paths (not secret), never contents.
package enum PrivateFiles {
    /// What `open` demands of a file beyond being a private regular file.
    struct Rules: Sendable {
        /// The largest size accepted.
        var limit: Int
        /// Exactly one hard link: a vault reached by two names would get two locks.
        var singleName = false
        /// For `readVersion`: how many leading bytes to check before reading the rest, and the
        /// check (a vault's magic and version), so that a large file that is not what it should
        /// be is refused after reading those bytes only, not the whole file.
        var prefix: Prefix?
        /// Who may own the file, and which mode bits are allowed (`.user` for everything the
        /// library writes; `.systemProvided` for files the service manager hands over).
        var owners: Owners = .user
    }

    /// Who may own a private file or directory.
    package enum Owners: Sendable {
        /// The user who opens it, mode 0600 (0700) or stricter.
        case user
        /// That user or root (the service manager, systemd's credentials), writable by the owner
        /// only and not accessible by others. Group read (and search) is allowed: systemd grants
        /// a service user access to a root-owned credential by an ACL, whose mask shows as the
        /// group bits; a group or other write bit, or any access for others, is refused.
        case systemProvided
        /// A vault's own directory: this user or root, not writable by group or others (as
        /// sshd's StrictModes demands of a home): nobody else can add, remove or replace an
        /// entry. Others may list it (systemd's `StateDirectory=` makes 0755), which shows a
        /// vault's name, size and times, never its contents (the vault itself stays 0600).
        case notWritableByOthers
    }

    /// The leading bytes `readVersion` checks first (see `Rules.prefix`).
    struct Prefix: Sendable {
        var count: Int
        var check: @Sendable ([UInt8]) throws(CredentialVaultError) -> Void
    }

    /// Refuses a file or directory that belongs to someone else or that other users can access
    /// (`owners` says what is allowed): a readable file leaks what is in it, a directory others
    /// can list leaks names, sizes and times (allowed for a vault's own directory), and a
    /// writable one lets them swap what is in it.
    ///
    /// The advice never makes a shared directory private: `chmod 700` on `/` or `/tmp` would
    /// break everything else in it. A sticky directory or `/` gets only a private subdirectory
    /// to keep the vault in; root's directory opened by another user gets `chmod go-w` for root
    /// to run (`chmod 700` would lock that user out); the library's own directory
    /// (`credential-vault`, as in the default locations) gets `chmod 700`; any other directory
    /// (the library cannot tell whether it made it) gets `chmod 700` only "if it holds nothing
    /// but vaults", else the subdirectory.
    static func checkOwnerAndMode(_ info: stat, path: String, isDirectory: Bool, owners: Owners = .user) throws(CredentialVaultError) {
        if owners == .systemProvided { return try checkSystemProvided(info, path: path) }
        let othersMayRead = owners == .notWritableByOthers
        if info.st_uid != geteuid() && !(othersMayRead && info.st_uid == 0) {
            let advice = isDirectory ? "; keep the vault in a private directory of your own: \(subdirectoryAdvice(path))" : ""
            let owners = othersMayRead ? "the user who opens it or by root" : "the user who opens it"
            throw .permissionDenied("\(path) belongs to another user (uid \(info.st_uid)); it must be owned by \(owners)\(advice)")
        }
        let mode = info.st_mode & 0o777
        if mode & (othersMayRead ? 0o022 : 0o077) != 0 {
            let advice: String
            if !isDirectory {
                advice = "run: chmod 600 \(path)"
            } else if info.st_mode & S_ISVTX != 0 || path == "/" {
                advice = "it is a shared directory: do not change its mode; keep the vault in a private subdirectory: \(subdirectoryAdvice(path))"
            } else if info.st_uid != geteuid() {
                // Root's, opened by another user: `chmod 700` would lock that user out, and a
                // subdirectory root made would be root's and closed to them too.
                advice = "it is root's: have root run: chmod go-w \(path)"
            } else if path.split(separator: "/").last == "credential-vault" {
                advice = "run: chmod 700 \(path)"
            } else {
                advice = "if it holds nothing but vaults, run: chmod 700 \(path); else keep the vault in a private subdirectory: \(subdirectoryAdvice(path))"
            }
            let exposure = othersMayRead ? "is writable by its group or by other users, who could replace what is in it" : "is accessible by other users"
            throw .permissionDenied("\(path) \(exposure) (mode \(String(mode, radix: 8))); \(advice)")
        }
    }

    /// `Owners.systemProvided`: owned by this user or root, no write for group or others, no
    /// access for others.
    private static func checkSystemProvided(_ info: stat, path: String) throws(CredentialVaultError) {
        if info.st_uid != geteuid() && info.st_uid != 0 {
            throw .permissionDenied("\(path) belongs to another user (uid \(info.st_uid)); only this user's or root's files are read here")
        }
        let mode = info.st_mode & 0o777
        if mode & 0o027 != 0 {
            throw .permissionDenied(
                "\(path) is writable by its group or accessible by other users (mode \(String(mode, radix: 8))): it is not what the service manager provides; nothing was read")
        }
    }

    /// The command that makes a private subdirectory of `path`.
    private static func subdirectoryAdvice(_ path: String) -> String {
        "mkdir -m 700 \(path == "/" ? "" : path)/credvault"
    }

    /// The one way a private file is opened (vault, lock file, key file, host secret): without
    /// following a symbolic link and without blocking (a FIFO would hang a read), then checked
    /// with `fstat` on the descriptor before anything is read: a regular file, the user's, mode
    /// 0600 or stricter, at most `rules.limit` bytes, one name when `rules.singleName`. Returns
    /// the descriptor (the caller closes it) and what `fstat` said, or `nil` when there is no
    /// such file (and `create` is not set). Every refusal takes milliseconds and reads nothing.
    static func open(
        _ location: FileLocation, writable: Bool = false, create: Bool = false, rules: Rules
    ) throws(CredentialVaultError) -> (fd: Int32, info: stat)? {
        var flags = (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
        if create { flags |= O_CREAT }
        let fd = openat(location.directoryFD, location.name, flags, 0o600)
        if fd < 0 {
            let code = errno
            if code == ENOENT && !create { return nil }
            throw openError(code, location)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw error(code, "cannot inspect \(location.path)")
        }
        // A creation cut short leaves its temp name on the vault: this vault's own second name.
        if rules.singleName, info.st_nlink > 1, AtomicFile.removeCreationLeftovers(of: location, sameFileAs: info) > 0 {
            _ = fstat(fd, &info)
        }
        do throws(CredentialVaultError) {
            try check(info, location.path, rules: rules)
        } catch {
            close(fd)
            throw error
        }
        return (fd, info)
    }

    private static func check(_ info: stat, _ path: String, rules: Rules) throws(CredentialVaultError) {
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .invalidArgument("\(path) is \(kind(info.st_mode)), not a regular file; nothing was read from it")
        }
        try checkOwnerAndMode(info, path: path, isDirectory: false, owners: rules.owners)
        guard Int(info.st_size) <= rules.limit else { throw .corrupted("\(path) is larger than \(rules.limit) bytes") }
        if rules.singleName { try checkSingleName(info, path: path) }
    }

    /// Refuses a vault with more than one hard link: each name would get a lock file of its own.
    private static func checkSingleName(_ info: stat, path: String) throws(CredentialVaultError) {
        guard info.st_nlink == 1 else {
            throw .invalidArgument(
                "\(path) has \(info.st_nlink) hard links; a vault must have exactly one name (two names would get two locks): remove the other links (find / -xdev -samefile \(path)); nothing was changed")
        }
    }

    /// The error for a failed `open` of `location`, naming what is there when it is not a file.
    private static func openError(_ code: Int32, _ location: FileLocation) -> CredentialVaultError {
        switch code {
        case ELOOP:
            var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlinkat(location.directoryFD, location.name, &target, target.count - 1)
            let to = length > 0 ? " to \(String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self))" : ""
            return .invalidArgument(
                "\(location.path) is a symbolic link\(to); links are not followed: give the real path")
        case EISDIR: return .invalidArgument("\(location.path) is a directory, not a regular file")
        case ENXIO, EOPNOTSUPP: return .invalidArgument("\(location.path) is not a regular file")
        default: return error(code, "cannot open \(location.path)")
        }
    }

    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }

    /// Reads a whole private file (see `open`) of at most `limit` bytes with the fingerprint of the
    /// version read (see `readVersion`); `nil` when it does not exist.
    package static func readVersion(_ location: FileLocation, limit: Int) throws(CredentialVaultError)
        -> (bytes: [UInt8], fingerprint: AtomicFile.Fingerprint)?
    {
        try readVersion(location, rules: Rules(limit: limit))
    }

    /// Reads a whole private file (see `open`) of at most `limit` bytes; `nil` when it does not exist.
    package static func read(_ location: FileLocation, limit: Int) throws(CredentialVaultError) -> [UInt8]? {
        try readVersion(location, rules: Rules(limit: limit))?.bytes
    }

    /// Reads a whole private file (see `open`) and the fingerprint of the very version read
    /// (fstat of the same descriptor, so a concurrent rename cannot pair old bytes with a new
    /// fingerprint). Reads to the end of the file, not to the size fstat saw: bytes appended
    /// meanwhile (a vault's journal entry) are read too, so a commit record read along the way
    /// never names bytes beyond what was read. The fingerprint is the one from before reading:
    /// if the file changes meanwhile, the next comparison sees a difference. With
    /// `rules.prefix`, the leading bytes are read and checked first: a file that fails the
    /// check costs that many bytes of reading and memory, whatever its size.
    static func readVersion(_ location: FileLocation, rules: Rules) throws(CredentialVaultError)
        -> (bytes: [UInt8], fingerprint: AtomicFile.Fingerprint)?
    {
        guard let (fd, info) = try open(location, rules: rules) else { return nil }
        defer { close(fd) }
        let path = location.path, limit = rules.limit
        if let prefix = rules.prefix { try prefix.check(try readPrefix(fd, count: prefix.count, path: path)) }
        // One byte more than the size seen, so that reaching the end needs no second buffer.
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var done = 0
        while true {
            if done == bytes.count {
                guard bytes.count <= limit else { throw .corrupted("\(path) is larger than \(limit) bytes") }
                bytes.append(contentsOf: repeatElement(0, count: min(max(bytes.count / 2, 4096), limit + 1 - bytes.count)))
            }
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw error(errno, "cannot read \(path)")
            }
            if n == 0 { break }
            done += n
        }
        bytes.removeLast(bytes.count - done)
        return (bytes, AtomicFile.Fingerprint(info))
    }

    /// The first `count` bytes of `fd` (fewer when the file is shorter), read with `pread`: the
    /// descriptor's offset is left at the start for the whole read that follows.
    private static func readPrefix(_ fd: Int32, count: Int, path: String) throws(CredentialVaultError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(done)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw error(errno, "cannot read \(path)")
            }
            if n == 0 { break }
            done += n
        }
        bytes.removeLast(count - done)
        return bytes
    }

    /// Maps an errno to a typed error whose message says what happened and that nothing changed.
    package static func error(_ code: Int32, _ what: String) -> CredentialVaultError {
        let reason = String(cString: strerror(code))
        switch code {
        case EACCES, EPERM: return .permissionDenied("\(what): \(reason); nothing was changed")
        case ENOSPC, EDQUOT: return .io("\(what): the disk is full (\(reason)); nothing was changed")
        case EROFS: return .io("\(what): the file system is read-only; nothing was changed")
        default: return .io("\(what): \(reason)")
        }
    }
}
