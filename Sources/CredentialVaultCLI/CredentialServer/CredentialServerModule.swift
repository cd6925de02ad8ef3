// The credential server's library is part of what this module offers its users (the
// commands' tests among them): its types read as the CLI's own.
@_exported import CredentialVaultCredentialServer
