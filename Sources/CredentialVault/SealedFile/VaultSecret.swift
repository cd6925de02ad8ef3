#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What unlocks a sealed-file vault: it yields the key-encryption key that unwraps the data key.
public enum VaultSecret: Sendable, CustomStringConvertible {
    /// A passphrase, stretched with Argon2id (the parameters stored in the vault).
    case passphrase(SecureBytes)
    /// A key file of 32 bytes to 64 KiB of high-entropy data (`credvault keygen`); hashed, not
    /// stretched. It must be private (0600).
    case keyFile(URL)
    /// The device key of this machine (host secret + machine id): zero configuration, but the
    /// vault opens only on this machine.
    case device

    /// A passphrase from UTF-8 text (the caller should drop its own copy quickly).
    public static func passphrase(_ text: String) -> VaultSecret {
        var bytes = Array(text.utf8)
        defer { wipe(&bytes) }
        return .passphrase(SecureBytes(copying: bytes))
    }

    /// Redacted: names the kind of key only.
    public var description: String {
        switch self {
        case .passphrase: "passphrase"
        case .keyFile(let url): "key file \(url.path)"
        case .device: "device key"
        }
    }
}

/// How a vault's data key is wrapped, as recorded in its header.
public enum KeySource: UInt8, Sendable, Hashable, CustomStringConvertible {
    /// Argon2id over a passphrase.
    case passphrase = 1
    /// BLAKE2b over a key file.
    case keyFile = 2
    /// The device key.
    case device = 3

    /// `passphrase`, `key file` or `device key`.
    public var description: String {
        switch self {
        case .passphrase: "passphrase"
        case .keyFile: "key file"
        case .device: "device key"
        }
    }
}
