import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a command reaches its store: the command line's `VaultRequest` and the backends its
/// executable links (`BackendFactory`). Every choice of backend is made here, from the
/// request's name or one the command names (`migrate --from`, `--to`).
package struct VaultAccess: Sendable {
    /// The common options of the command line.
    package var request: VaultRequest
    /// What this executable links.
    package let backends: any BackendFactory

    /// Combines a command line's request with its executable's backends.
    package init(request: VaultRequest, backends: any BackendFactory) {
        self.request = request
        self.backends = backends
    }

    /// Whether the backend called `name` needs what only `credvault-full` links: `secret-service`,
    /// `auto` (or `automatic`), which asks the Secret Service, `postgres`, and `libsecret-file`
    /// (OpenSSL, GLib's GVariant and the Secret portal).
    package static func needsFullExecutable(_ name: String) -> Bool {
        ["secret-service", "auto", "automatic", "postgres", VaultBackend.libsecretFile.rawValue].contains(name)
    }

    /// What backend `name` means here. `file`, `memory` and `postgres` are taken as they are;
    /// `auto` and `secret-service` are decided by the executable's backends (`auto` asks the
    /// Secret Service, never prompting, and falls back to the sealed file when it is
    /// unavailable, reporting a locked keyring with `isLocked`). An explicit name was already
    /// chosen over $CREDVAULT_BACKEND, so it is not consulted again.
    package func resolve(_ name: String) throws -> BackendResolution {
        switch name {
        case VaultBackend.file.rawValue: return BackendResolution(kind: .file, reason: "chosen explicitly")
        case VaultBackend.memory.rawValue: return BackendResolution(kind: .memory, reason: "chosen explicitly")
        case VaultBackend.postgres.rawValue: return BackendResolution(kind: .postgres, reason: "chosen explicitly")
        case _ where Self.needsFullExecutable(name): return try backends.resolve(name, request: request)
        default: throw UsageError("unknown backend '\(name)' (file, secret-service, memory, auto, postgres, libsecret-file)")
        }
    }

    /// Opens the request's backend. With `create`, a missing vault is created; without, `nil`
    /// is returned for a missing vault (read commands then see an empty store).
    package func openStore(create: Bool) throws -> (any TokenStorageBackend)? {
        try openStore(named: request.backend, create: create)
    }

    /// Opens the backend called `name` (`file`, `secret-service`, `memory`, `auto`, `postgres`
    /// or `libsecret-file`), like `openStore(create:)`. Throws `LockedKeyringError` when `auto` found the
    /// keyring locked.
    package func openStore(named name: String, create: Bool) throws -> (any TokenStorageBackend)? {
        let resolution = try resolve(name)
        if resolution.isLocked { throw LockedKeyringError(message: resolution.reason) }
        switch resolution.kind {
        case .file: return try openSealedFile(create: create, custody: resolution.custody)
        case .secretService: return try backends.openSecretService(allowingInteraction: request.allowsInteraction)
        case .memory: return InMemoryStore()
        case .postgres: return try backends.openPostgres(self)
        case .libsecretFile: return try backends.openLibsecretFile(request)
        }
    }
}
