/// The options every command shares (which backend and vault, and how to unlock it): their
/// names, for the parser, and their help. `VaultRequest` reads their values. Secrets come only
/// from files, stdin or a no-echo prompt, never from arguments.
package enum VaultOptions {
    package static let flags: Set<String> = [
        "device", "ask-passphrase", "json", "rollback-counter", "no-rollback-counter", "interactive", "insecure-transport",
        "fleet-device-key",
    ]
    package static let options: Set<String> = [
        "vault", "passphrase-file", "key-file", "kdf", "backend", "custody", "tpm-tcti", "key-cache", "postgres", "fleet-host",
        "fleet-schema", "fleet-key-file", "fleet-passphrase-file", "postgres-password-file", "fleet-private-key",
        "keyring-file-password-file",
    ]

    /// The common options' help, for commands whose default backend is `file`.
    package static let help = help(defaultBackend: VaultBackend.file.rawValue)

    /// The common options' help, naming `defaultBackend` as the default (the credential
    /// helpers' is `auto`).
    package static func help(defaultBackend: String) -> String {
        commonOptionsHelp.replacing("(default: file, or", with: "(default: \(defaultBackend), or")
    }

    private static let commonOptionsHelp = """
        common options:
          --backend file|secret-service|memory|auto|postgres|libsecret-file
                                     storage backend (default: file, or $CREDVAULT_BACKEND); auto is
                                     the Secret Service when it is reachable, else the file; a locked
                                     keyring is reported (exit code 10), never replaced by the file;
                                     libsecret-file is libsecret's own keyring file
                                     ($SECRET_FILE_TEST_PATH, else $XDG_DATA_HOME/keyrings/default.keyring),
                                     shared with libsecret and oo7: inside a Flatpak or Snap sandbox
                                     keyed by the Secret portal, outside one only with:
          --keyring-file-password-file PATH
                                     the password of libsecret's keyring file (one trailing newline
                                     is ignored; used inside a sandbox too, as libsecret's
                                     SECRET_FILE_TEST_PASSWORD is)
          --interactive              let the Secret Service provider ask you when an operation needs it
                                     (its unlock dialog, KeePassXC's access confirmation); without it
                                     such an operation fails with exit code 14 ($CREDVAULT_INTERACTIVE=1
                                     does the same)
          --postgres URL             the fleet store's libpq connection string or URL (with --backend
                                     postgres; default $CREDVAULT_POSTGRES), unlocked with this host's
                                     --key-file or --passphrase-file (see credvault fleet --help); a
                                     password in it is refused (every local user can read a command
                                     line): use a passfile, $CREDVAULT_POSTGRES or:
          --postgres-password-file PATH
                                     the PostgreSQL role's password (one trailing newline is ignored)
          --insecure-transport       accept a TCP connection weaker than sslmode=verify-full (the
                                     default over TCP; a Unix socket needs none), with a warning
          --fleet-host NAME          this host's name in the fleet store (default $CREDVAULT_FLEET_HOST,
                                     else the machine's host name)
          --fleet-schema NAME        the fleet store's schema (default $CREDVAULT_FLEET_SCHEMA, else credvault)
          --fleet-private-key PATH   this host's private key file (credvault keygen): the host is
                                     enrolled by its public key, and rotations re-key it
                                     ($CREDVAULT_FLEET_PRIVATE_KEY does the same)
          --fleet-device-key         this host's key pair is this machine's (its host secret and
                                     machine id; with --custody keyring|tpm|portal, that custodian's secret
                                     too): enrolled by its public key, never in a file of its own
          --fleet-key-file PATH, --fleet-passphrase-file PATH
                                     this host's fleet key when another backend of the same command
                                     (migrate) takes --key-file or --passphrase-file
                                     ($CREDVAULT_FLEET_KEY_FILE does the same)
          --vault PATH               sealed-file vault (default: $XDG_DATA_HOME/credential-vault/default.cvault)
          --passphrase-file PATH     unlock with the passphrase in PATH (one trailing newline is ignored);
                                     $CREDVAULT_PASSPHRASE_FILE does the same
          --key-file PATH            unlock with a key file (see credvault keygen)
          --ask-passphrase           prompt for the passphrase without echo (needs a terminal)
          --device                   unlock with this machine's device key (the default)
          --kdf interactive|moderate|sensitive
                                     Argon2id cost when a passphrase vault is created (default: moderate)
          --custody file|keyring|tpm|portal
                                     who keeps the device secret and rollback counter of a vault being
                                     created (default: file, the host-secret file, the weakest; inside
                                     a Flatpak or Snap sandbox: portal, the XDG Secret portal's
                                     secret for the app); an existing vault uses the custodian its
                                     header names
          --rollback-counter, --no-rollback-counter
                                     whether a new vault gets a rollback counter (default: with
                                     keyring, tpm and portal custody); an older copy is then refused (exit 13)
          --tpm-tcti TCTI            the TPM to use (default: $CREDVAULT_TPM_TCTI, else device:/dev/tpmrm0)
          --key-cache SECONDS        keep this passphrase or key-file vault's unlocked key in the kernel
                                     keyring for SECONDS (this user only, expired by the kernel), so
                                     later commands need no passphrase and no Argon2id; 0 forgets it
                                     now ($CREDVAULT_KEY_CACHE does the same; off by default)
          --json                     machine-readable output
        """
}
