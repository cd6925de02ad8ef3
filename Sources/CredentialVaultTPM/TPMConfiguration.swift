import CredentialVault
import Foundation
import Logging

/// Which TPM the TPM custodian uses, where it keeps the sealed device secret, what it binds it
/// to, and how long it waits for the TPM. Two configurations are equal when they name the same
/// TPM, file, PCRs and deadline (where they log and count does not matter).
public struct TPMConfiguration: Sendable, Hashable {
    /// The tpm2-tss TCTI configuration string: `device:/dev/tpmrm0` (the kernel's resource
    /// manager, the default), `swtpm:path=/run/user/1000/swtpm/sock` (a software TPM on a UNIX
    /// socket), `swtpm:host=127.0.0.1,port=2321`, `mssim:...`. Not read from the environment.
    public var tcti: String
    /// The 0700 directory that holds the sealed device secret (0600); by default the host
    /// secret's, `$XDG_STATE_HOME/credential-vault`.
    public var directory: String
    /// The sealed device secret's file name in `directory`.
    public var fileName: String
    /// PCRs of the SHA-256 bank (0...23) the device secret is sealed to, e.g. `[7]` (Secure
    /// Boot state): once any of them changes, the TPM refuses to unseal it. Empty: none. A
    /// secret sealed with other PCRs than these is refused, never used with its own binding.
    public var pcrs: [Int]
    /// How long one operation (connect, commands, close) may take before `timedOut`: a TPM
    /// that another program holds (swtpm serves one connection at a time) must not hang the
    /// caller. 1 ms to 10 minutes.
    public var deadline: Duration
    /// Where the custodian logs its decisions (default: nowhere). At `debug`: each connection
    /// to the TPM; at `warning`: a TPM that cannot be reached, an operation past its deadline
    /// (`timedOut`; its worker thread is abandoned and finishes on its own), a refusal because
    /// the PCRs changed or the configured PCRs are not the sealed secret's. Records have
    /// `category: tpm` and the TCTI, never a secret, the sealed secret's path or a vault's id.
    public var logger: Logger = .credentialVaultSilent
    /// Where the custodian counts timeouts (trait `Metrics`).
    package var metrics = VaultMetrics()

    /// The default file name of the sealed device secret.
    public static let defaultFileName = "tpm-device-secret"

    /// The host secret's directory: `$XDG_STATE_HOME/credential-vault` (default
    /// `~/.local/state/credential-vault`), or `/var/lib/credential-vault` for a system service.
    public static func defaultDirectory(systemService: Bool = false) -> String {
        systemService ? "/var/lib/credential-vault" : XDGDirectories.state.appendingPathComponent("credential-vault").path
    }

    /// A configuration; `directory` `nil` means `defaultDirectory()`.
    public init(
        tcti: String = "device:/dev/tpmrm0", directory: String? = nil, fileName: String = TPMConfiguration.defaultFileName,
        pcrs: [Int] = [], deadline: Duration = .seconds(5)
    ) {
        self.tcti = tcti
        self.directory = directory ?? Self.defaultDirectory()
        self.fileName = fileName
        self.pcrs = pcrs
        self.deadline = deadline
    }

    /// The PCR selection, after checking every field (`invalidArgument` saying which).
    func validated() throws(CredentialVaultError) -> PCRSelection? {
        guard !tcti.isEmpty, !tcti.utf8.contains(0), tcti.utf8.count <= 4096 else {
            throw .invalidArgument("the TPM TCTI must be a non-empty string such as device:/dev/tpmrm0 or swtpm:path=SOCKET")
        }
        guard directory.hasPrefix("/"), !directory.utf8.contains(0) else {
            throw .invalidArgument("the TPM custodian's directory must be an absolute path")
        }
        guard !fileName.isEmpty, !fileName.contains("/"), fileName != ".", fileName != "..", !fileName.utf8.contains(0) else {
            throw .invalidArgument("the sealed device secret's file name must be one path component")
        }
        guard deadline >= .milliseconds(1), deadline <= .seconds(600) else {
            throw .invalidArgument("the TPM deadline must be between 1 ms and 10 minutes")
        }
        guard let selection = PCRSelection(pcrs) else {
            throw .invalidArgument("PCR indices must be in 0...23 (SHA-256 bank), not \(pcrs)")
        }
        return selection.indices.isEmpty ? nil : selection
    }

    /// Equal when the TPM, the file, the PCRs and the deadline are (not the logger).
    public static func == (a: TPMConfiguration, b: TPMConfiguration) -> Bool {
        (a.tcti, a.directory, a.fileName, a.pcrs, a.deadline) == (b.tcti, b.directory, b.fileName, b.pcrs, b.deadline)
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(tcti)
        hasher.combine(directory)
        hasher.combine(fileName)
        hasher.combine(pcrs)
        hasher.combine(deadline)
    }

    /// The sealed device secret's path, for messages.
    var path: String { directory == "/" ? "/\(fileName)" : "\(directory)/\(fileName)" }
}
