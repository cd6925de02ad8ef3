#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A short-lived cache of secrets (an unlocked vault key) in the Linux kernel keyring, so that
/// a script calling `credvault` many times pays a passphrase's Argon2id once, not per process.
///
/// Each entry is a `user` key in this uid's user keyring (`@u`), named `prefix` + `name`: it
/// lives in kernel memory only (never in a file, never swapped to disk by the keyring, gone at
/// reboot), is readable by processes of this uid in any session and by no other user (root
/// excepted), and **expires when the kernel says so** (`timeout`), whether or not any process
/// of ours is still running. It is a cache, not custody: it keeps nothing from this uid or root.
///
/// Calls are a few syscalls (microseconds) and never block. Errors: `notAvailable` when the
/// keyring syscalls are refused (seccomp, as in Docker's default profile), `invalidArgument`
/// for a bad name, size or timeout.
public struct KernelKeyCache: Sendable {
    /// The prefix of every key's description, keeping this cache's keys apart from others'.
    public let prefix: String

    /// The longest timeout accepted: a cache that holds an unlocked key for days is not a cache.
    public static let maximumTimeout: Duration = .seconds(7 * 24 * 3600)

    /// A cache whose keys are named `prefix` + name (default `credvault:`).
    public init(prefix: String = "credvault:") {
        self.prefix = prefix
    }

    /// Stores `key` as `name`, replacing an entry of that name; the kernel removes it after
    /// `timeout` (rounded up to whole seconds; 1 s to `maximumTimeout`).
    public func store(_ key: SecureBytes, name: String, timeout: Duration) throws(CredentialVaultError) {
        guard timeout > .zero, timeout <= Self.maximumTimeout else {
            throw .invalidArgument("a cached key's timeout must be more than 0 s and at most \(Self.maximumTimeout)")
        }
        // In range: at most 604800 s, so the rounding up cannot overflow.
        let (seconds, attoseconds) = timeout.components
        let whole = UInt32(seconds) + (attoseconds > 0 ? 1 : 0)
        _ = try KernelKeyring.add(key, description: try description(name), seconds: whole)
    }

    /// The key stored as `name`, or `nil` when there is none (never stored, expired, removed).
    public func load(name: String) throws(CredentialVaultError) -> SecureBytes? {
        guard let id = try KernelKeyring.search(description: try description(name)) else { return nil }
        return try KernelKeyring.read(id: id)
    }

    /// Removes the entry `name` now, for every process; no error when there is none.
    public func remove(name: String) throws(CredentialVaultError) {
        guard let id = try KernelKeyring.search(description: try description(name)) else { return }
        try KernelKeyring.invalidate(id: id)
    }

    /// The key's description: the prefix and the name, without NUL (the kernel takes a C
    /// string) and at most 4095 bytes (the kernel's limit).
    private func description(_ name: String) throws(CredentialVaultError) -> String {
        let full = prefix + name
        guard !name.isEmpty, !full.utf8.contains(0), full.utf8.count < 4096 else {
            throw .invalidArgument("a cached key's name must be non-empty, without NUL, and under 4096 bytes with its prefix")
        }
        return full
    }
}
