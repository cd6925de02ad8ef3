import CredentialVault
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where the `KeyLock` files are: `credential-vault/` (mode 0700, owned by this user) in the
/// first of
/// 1. `$XDG_RUNTIME_DIR` (the login session's private tmpfs, `/run/user/<uid>`);
/// 2. `/run/user/<uid>` when it exists and is this user's (the same directory, for a process
///    started without the variable, e.g. from cron, that still talks to the session's daemon);
/// 3. `$XDG_CACHE_HOME`, else `$HOME/.cache` (a per-user directory that no one else can occupy
///    in advance, unlike a fixed name in `/tmp`).
///
/// Processes are excluded from one another only when they pick the same directory: in a
/// desktop session every process sees the same `XDG_RUNTIME_DIR`. An existing `credential-vault`
/// directory is used only when it is a real directory (not a symbolic link), owned by this user
/// and writable by no one else; otherwise operations throw `permissionDenied` rather than lock
/// in a place another user controls.
enum LockDirectory {
    /// The directory found last, with the `XDG_RUNTIME_DIR` it was found for.
    private static let cached = Mutex<(runtime: String?, directory: String)?>(nil)

    /// The lock directory, created (and checked) on first use in the process.
    static func prepared() throws(CredentialVaultError) -> String {
        let runtime = getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }
        if let known = cached.withLock({ $0 }), known.runtime == runtime { return known.directory }
        let directory = try make(in: try base(runtime: runtime))
        cached.withLock { $0 = (runtime, directory) }
        return directory
    }

    /// Forgets the directory found, so that the next `prepared()` makes it again.
    static func forget() {
        cached.withLock { $0 = nil }
    }

    /// The directory that holds `credential-vault/` (see the type's documentation).
    private static func base(runtime: String?) throws(CredentialVaultError) -> String {
        let uid = geteuid()
        if let runtime, runtime.hasPrefix("/"), isOwnDirectory(runtime, uid: uid) { return runtime }
        let systemd = "/run/user/\(uid)"
        if isOwnDirectory(systemd, uid: uid) { return systemd }
        let environment = ProcessInfo.processInfo.environment
        let cache: String
        if let configured = environment["XDG_CACHE_HOME"], configured.hasPrefix("/") {
            cache = configured
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            cache = home + "/.cache"
        } else {
            throw .permissionDenied(
                "no private directory for the Secret Service lock files: set XDG_RUNTIME_DIR (or HOME)")
        }
        if mkdir(cache, 0o700) != 0, errno != EEXIST {
            throw error(errno, "cannot create \(cache) for the Secret Service lock files")
        }
        return cache
    }

    /// Makes `<base>/credential-vault` (0700) unless it exists, and checks that it is private.
    private static func make(in base: String) throws(CredentialVaultError) -> String {
        let directory = base + "/credential-vault"
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw error(errno, "cannot create the lock directory \(directory)")
        }
        var info = stat()
        guard lstat(directory, &info) == 0 else { throw error(errno, "cannot inspect the lock directory \(directory)") }
        guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(), info.st_mode & 0o022 == 0 else {
            throw .permissionDenied(
                "the lock directory \(directory) is not a private directory of this user (owner, mode or symbolic link): remove it")
        }
        return directory
    }

    /// Whether `path` is a directory owned by `uid`.
    private static func isOwnDirectory(_ path: String, uid: uid_t) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_uid == uid
    }

    /// The vault error for a failed file-system call.
    static func error(_ code: Int32, _ what: String) -> CredentialVaultError {
        let reason = String(cString: strerror(code))
        switch code {
        case EACCES, EPERM, EROFS: return .permissionDenied("\(what): \(reason)")
        default: return .io("\(what): \(reason)")
        }
    }
}
