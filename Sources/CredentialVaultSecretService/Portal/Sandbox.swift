import CredentialVault
import Foundation

/// The application sandbox this process runs in (Flatpak or Snap), found as libsecret finds it:
/// the file `/.flatpak-info` exists (whatever it is), or the variable `SNAP_NAME` is set (even
/// empty). Only inside one does the Secret portal give this application a secret of its own:
/// xdg-desktop-portal gives every unsandboxed caller the same app id, "".
public struct Sandbox: Sendable, Hashable, CustomStringConvertible {
    /// Which kind of sandbox.
    public enum Kind: String, Sendable, Hashable {
        /// Flatpak (`/.flatpak-info` exists).
        case flatpak
        /// Snap (`SNAP_NAME` is set).
        case snap
    }

    /// Which kind of sandbox.
    public var kind: Kind
    /// The application's id as the sandbox names it (the `name` of `/.flatpak-info`'s
    /// `[Application]` group, or `SNAP_NAME`), for messages; `nil` when it cannot be read. The
    /// portal finds the id itself (from `/proc/PID/root/.flatpak-info`): this one is not sent.
    public var applicationID: String?

    /// A sandbox of `kind` for the application `applicationID` (tests, and programs that know).
    public init(kind: Kind, applicationID: String?) {
        self.kind = kind
        self.applicationID = applicationID
    }

    /// Where Flatpak puts its description of the sandbox, inside the sandbox.
    public static let flatpakInfoPath = "/.flatpak-info"

    /// The sandbox this process runs in, or `nil` outside one. `environment` is consulted for
    /// `SNAP_NAME` (the process's by default); `flatpakInfo` is the file whose existence means
    /// Flatpak (tests name another).
    public static func detect(
        environment: [String: String] = ProcessInfo.processInfo.environment, flatpakInfo: String = flatpakInfoPath
    ) -> Sandbox? {
        // What libsecret's g_file_test(G_FILE_TEST_EXISTS) asks: access(F_OK).
        if access(flatpakInfo, F_OK) == 0 {
            return Sandbox(kind: .flatpak, applicationID: flatpakApplicationID(flatpakInfo))
        }
        if let name = environment["SNAP_NAME"] { return Sandbox(kind: .snap, applicationID: name.isEmpty ? nil : name) }
        return nil
    }

    /// `name` of the `[Application]` group of the key file at `path` (at most 64 KiB read).
    private static func flatpakApplicationID(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 65_536), let text = String(data: data, encoding: .utf8) else { return nil }
        var inApplication = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("[") {
                inApplication = trimmed == "[Application]"
            } else if inApplication, trimmed.hasPrefix("name") {
                let parts = trimmed.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == "name" {
                    let value = parts[1].trimmingCharacters(in: .whitespaces)
                    return value.isEmpty ? nil : value
                }
            }
        }
        return nil
    }

    /// "a Flatpak sandbox (org.example.App)", "a Snap sandbox (example)".
    public var description: String {
        let name = kind == .flatpak ? "a Flatpak sandbox" : "a Snap sandbox"
        return applicationID.map { "\(name) (\($0))" } ?? name
    }
}
