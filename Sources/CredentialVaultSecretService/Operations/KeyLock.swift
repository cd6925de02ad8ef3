import CredentialVault
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The lock that `save` and `take` hold around their D-Bus calls, so that among CredentialVault
/// users (threads and processes of one user) a `take` and a `save` of the same key never
/// interleave: a `save` that replaces an item in place can then never land between a taker's
/// read and its delete (see `SecretServiceStore`, "Replacing and taking").
///
/// **One of 64 lock files per user.** A key's lock is the file
/// `<lock directory>/secret-service-NN.lock`, where `NN` (00 to 63) is a stable hash (FNV-1a,
/// 64-bit) of the key's `service` attribute, a NUL and its `username` attribute, modulo 64. The
/// file name says nothing about the key, the number of files stays bounded however many keys
/// come and go (single-use PKCE and state keys are random), and two keys share a file only by a
/// 1-in-64 chance, which costs nothing but a short wait behind one operation. This naming is
/// the cross-process protocol: every version of the library must derive the same file.
///
/// **Held with `flock`** on a descriptor opened for this acquisition only: two threads of one
/// process conflict like two processes, and the kernel drops the lock when its holder exits or
/// is killed, so a lock is never left stale. Waiting polls (0.1 ms doubling up to 5 ms) until
/// the operation's deadline, then throws `busy`: never a hang. A holder keeps it for at most its
/// own deadline, after which its D-Bus calls are cancelled.
///
/// **Cancellable.** On a store's thread (the async API) the wait also polls the job's
/// `CancellationFlag` and throws `cancelled` within one pause (5 ms at most) of the task's
/// cancellation. That is safe: nothing has been sent to the Secret Service while the lock is
/// awaited. Elsewhere (the synchronous API) there is no flag and nothing changes.
enum KeyLock {
    /// How many lock files the keys are spread over.
    static let stripes = 64

    /// Acquires the lock of the key whose identifying attributes are `service` and `account`,
    /// waiting until `deadline` at most; throws `busy` past it, `cancelled` when the job's
    /// task is cancelled meanwhile (see the type), `permissionDenied` or `io` when the lock file
    /// cannot be opened.
    static func acquire(service: String, account: String, until deadline: ContinuousClock.Instant) throws(CredentialVaultError) -> FileLock {
        let path = try path(service: service, account: account)
        return try poll(until: deadline) { () throws(CredentialVaultError) in try tryAcquire(path) }
    }

    /// Calls `attempt` until it returns a lock, pausing 0.1 ms doubling up to 5 ms between
    /// tries, until `deadline` (then `busy`), or until the job's task is cancelled (`cancelled`:
    /// see the type). Shared with the keyring file's lock (`KeyringFileLock`).
    static func poll(
        until deadline: ContinuousClock.Instant, _ attempt: () throws(CredentialVaultError) -> FileLock?
    ) throws(CredentialVaultError) -> FileLock {
        let cancellation = CancellationFlag.current
        var pause = Duration.microseconds(100)
        while true {
            // Checked before each try: a cancelled job never takes the lock (nor sends anything).
            try cancellation?.check()
            if let lock = try attempt() { return lock }
            let now = ContinuousClock.now
            if now >= deadline { throw .busy }
            Thread.sleep(forTimeInterval: min(pause, deadline - now).inSeconds)
            pause = min(pause * 2, .milliseconds(5))
        }
    }

    /// The lock file of a key (see the type's documentation); creates the lock directory.
    static func path(service: String, account: String) throws(CredentialVaultError) -> String {
        let directory = try LockDirectory.prepared()
        let number = stripe(service: service, account: account)
        return directory + "/secret-service-" + (number < 10 ? "0" : "") + String(number) + ".lock"
    }

    /// The stripe (0 ..< `stripes`) of a key: FNV-1a (64-bit) of `service`, a NUL byte and
    /// `account` (UTF-8), modulo `stripes`. Part of the cross-process protocol: never change it.
    static func stripe(service: String, account: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        for byte in service.utf8 { mix(byte) }
        mix(0)
        for byte in account.utf8 { mix(byte) }
        return Int(hash % UInt64(stripes))
    }

    /// Tries once; `nil` when another holder has it.
    private static func tryAcquire(_ path: String) throws(CredentialVaultError) -> FileLock? {
        var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd < 0, errno == ENOENT {
            // The directory was removed meanwhile (a runtime directory is cleaned at logout).
            LockDirectory.forget()
            _ = try LockDirectory.prepared()
            fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        }
        guard fd >= 0 else { throw LockDirectory.error(errno, "cannot open the Secret Service lock file \(path)") }
        switch FileLock.tryLock(fd) {
        case .success(let lock): return lock
        case .failure(let failure): throw LockDirectory.error(failure.code, "cannot lock \(path)")
        }
    }
}

extension Duration {
    /// The duration in seconds, for `Thread.sleep`.
    fileprivate var inSeconds: TimeInterval {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
