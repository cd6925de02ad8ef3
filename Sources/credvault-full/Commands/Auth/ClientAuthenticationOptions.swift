import CredentialVault
import CredentialVaultAuth
import CredentialVaultCLI
import Foundation

/// How `credvault auth token --client-credentials` authenticates the client, from its options:
/// a secret file (`client_secret_basic`, or `client_secret_jwt` with `--client-secret-jwt`), or
/// a private key for `private_key_jwt`, named in the vault (`--client-key SERVICE/ACCOUNT`) or
/// in a key file (`--client-key-file PATH`). Secrets and keys are never taken as option values:
/// a value on the command line is visible to every user in `/proc/PID/cmdline`.
enum ClientAuthenticationOptions {
    /// The options this reads (besides the flag `client-secret-jwt`).
    static let options: Set<String> = ["client-secret-file", "client-key", "client-key-file", "client-key-id", "assertion-audience"]

    static let help = """
          --client-secret-file PATH      the client secret (client_secret_basic; with
                                         --client-secret-jwt, client_secret_jwt)
          --client-key SERVICE/ACCOUNT   private_key_jwt with the private key (PEM or JWK) stored in
                                         the vault under that name
          --client-key-file PATH         private_key_jwt with the private key in this file (PEM or
                                         JWK; a regular file of yours that no one else can read)
          --client-key-id KID            the key's kid as registered (default: the JWK's kid, else
                                         the RFC 7638 thumbprint)
          --assertion-audience AUD       the assertion's aud: endpoint (the URL of the endpoint
                                         called; the default, what glewlwyd wants), token-endpoint,
                                         issuer (draft-ietf-oauth-rfc7523bis), or a literal string
        """

    /// The client authentication the options ask for, reading the secret or key now; `store`
    /// (the vault, open) is needed for `--client-key` only.
    static func resolve(_ context: AuthContext, store: (any TokenStorageBackend)?) async throws -> ClientAuthentication {
        let secretFile = context.option("client-secret-file")
        let keyName = context.option("client-key")
        let keyFile = context.option("client-key-file")
        let given = [secretFile, keyName, keyFile].compactMap { $0 }
        guard given.count == 1 else {
            throw UsageError("--client-credentials needs exactly one of --client-secret-file, --client-key and --client-key-file")
        }
        // A key pasted where a name or path belongs must not reach an error message (which
        // would echo it to a terminal or a log): refused without repeating it.
        for (option, value) in [("--client-key", keyName), ("--client-key-file", keyFile), ("--client-secret-file", secretFile)] {
            if let value, looksLikeKeyMaterial(value) {
                throw UsageError("\(option) takes a name or a path, never the key itself (not repeated here)")
            }
        }
        let asJWT = context.args.value.flags.contains("client-secret-jwt")
        let audience = try audience(context.option("assertion-audience"))
        if let secretFile {
            guard context.option("client-key-id") == nil else { throw UsageError("--client-key-id goes with --client-key or --client-key-file") }
            let secret = try SecretReader.text(fromFile: secretFile, what: "client secret")
            if asJWT { return .clientSecretJWT(secret: secret, audience: audience ?? .requestEndpoint) }
            guard audience == nil else { throw UsageError("--assertion-audience goes with --client-secret-jwt or a client key") }
            return .clientSecretBasic(secret: secret)
        }
        guard !asJWT else { throw UsageError("--client-secret-jwt goes with --client-secret-file") }
        let keyID = context.option("client-key-id")
        let key: JWSSigningKey
        if let keyFile {
            let bytes = try SecretReader.bytes(fromFile: keyFile, what: "client key")
            do { key = try JWSSigningKey(privateKey: bytes, keyID: keyID) } catch {
                throw UsageError("the client key file \(keyFile): \(error.reason)")
            }
        } else {
            let credential = try CredentialKeyName.parse(Substring(keyName ?? ""), context: "--client-key")
            guard let store else { throw UsageError("--client-key needs the vault") }
            key = try await JWSSigningKey.load(credential, from: store, keyID: keyID)
        }
        return .privateKeyJWT(key: key, audience: audience ?? .requestEndpoint)
    }

    /// PEM armour, a JSON object or a line break: key material rather than a name or path.
    static func looksLikeKeyMaterial(_ value: String) -> Bool {
        value.contains("-----BEGIN") || value.contains("\n") || value.hasPrefix("{")
    }

    /// `--assertion-audience`: `endpoint`, `token-endpoint`, `issuer` or a literal string.
    static func audience(_ text: String?) throws -> ClientAssertionAudience? {
        switch text {
        case nil: return nil
        case "endpoint": return .requestEndpoint
        case "token-endpoint": return .tokenEndpoint
        case "issuer": return .issuer
        case let literal?:
            guard !literal.isEmpty else { throw UsageError("--assertion-audience is empty") }
            return .explicit(literal)
        }
    }
}
