#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The application sandbox this process runs in (Flatpak or Snap): the file `/.flatpak-info`
/// exists (whatever it is, as libsecret tests), or the variable `SNAP_NAME` is set (even empty)
/// **and** the process is in a snap's cgroup, as xdg-desktop-portal itself tells a snap (and
/// libportal): `SNAP_NAME` alone is anyone's to set, and leaks from a snap's terminal into host
/// programs. Only inside one does the Secret portal give this application a secret of its own:
/// xdg-desktop-portal gives every unsandboxed caller the same app id, "".
public struct Sandbox: Sendable, Hashable, CustomStringConvertible {
    /// Which kind of sandbox.
    public enum Kind: String, Sendable, Hashable {
        /// Flatpak (`/.flatpak-info` exists).
        case flatpak
        /// Snap (`SNAP_NAME` is set, in a snap's cgroup).
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

    /// Where the process's cgroups are listed.
    public static let cgroupPath = "/proc/self/cgroup"

    /// The sandbox this process runs in, or `nil` outside one. `environment` is consulted for
    /// `SNAP_NAME` (the process's by default); `flatpakInfo` is the file whose existence means
    /// Flatpak and `cgroup` the list of the process's cgroups (tests name others).
    public static func detect(
        environment: [String: String] = ProcessInfo.processInfo.environment, flatpakInfo: String = flatpakInfoPath,
        cgroup: String = cgroupPath
    ) -> Sandbox? {
        // What libsecret's g_file_test(G_FILE_TEST_EXISTS) asks: access(F_OK).
        if access(flatpakInfo, F_OK) == 0 {
            return Sandbox(kind: .flatpak, applicationID: flatpakApplicationID(flatpakInfo))
        }
        if let name = environment["SNAP_NAME"], inSnapCgroup(cgroup) {
            return Sandbox(kind: .snap, applicationID: isApplicationID(name, snap: true) ? name : nil)
        }
        return nil
    }

    /// Whether the cgroup list at `path` puts the process in a snap, by xdg-desktop-portal's
    /// rule (`pid_is_snap`): a line `ID:CONTROLLER:PATH` of the freezer, name=systemd or unified
    /// hierarchy whose path contains `/snap.`. Outside such a cgroup the portal answers the
    /// process as a host program, whatever its environment says.
    private static func inSnapCgroup(_ path: String) -> Bool {
        guard let text = readSmallFile(path) else { return false }
        return text.split(separator: "\n").contains { line in
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, ["freezer", "name=systemd", ""].contains(fields[1]) else { return false }
            return fields[2].contains("/snap.")
        }
    }

    /// Whether `name` is an application id as the sandbox's own rules have it, so that what a
    /// file or the environment says reaches messages and logs only then: Flatpak's (the
    /// portal's `xdp_is_valid_app_id`: at most 255 characters, at least two elements separated
    /// by `.`, each of `[A-Za-z0-9_-]` not starting with a digit), a snap name's (at most 40 of
    /// `[a-z0-9-]`).
    private static func isApplicationID(_ name: String, snap: Bool) -> Bool {
        let bytes = Array(name.utf8)
        func isWord(_ byte: UInt8) -> Bool {
            (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5f || byte == 0x2d
        }
        if snap {
            return !bytes.isEmpty && bytes.count <= 40 && bytes.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d }
        }
        let elements = bytes.split(separator: 0x2e, omittingEmptySubsequences: false)
        return bytes.count <= 255 && elements.count >= 2
            && elements.allSatisfy { element in
                guard let first = element.first, !(first >= 0x30 && first <= 0x39) else { return false }
                return element.allSatisfy(isWord)
            }
    }

    /// The text of the regular file at `path` (at most 64 KiB), or `nil`. Opened without
    /// blocking: a FIFO there would otherwise wait for a writer (a hang in every resolver's
    /// init); anything but a regular file is not read.
    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: 65_536)
        var filled = 0
        while filled < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if got > 0 {
                filled += got
            } else if got < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        return String(validating: bytes[..<filled], as: UTF8.self)
    }

    /// `name` of the `[Application]` group of the key file at `path` (at most 64 KiB read),
    /// when it is an application id.
    private static func flatpakApplicationID(_ path: String) -> String? {
        guard let text = readSmallFile(path) else { return nil }
        var inApplication = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let trimmed = Self.trimmed(line)
            if trimmed.hasPrefix("[") {
                inApplication = trimmed == "[Application]"
            } else if inApplication, trimmed.hasPrefix("name") {
                let parts = trimmed.split(separator: "=", maxSplits: 1)
                if parts.count == 2, Self.trimmed(parts[0]) == "name" {
                    let value = Self.trimmed(parts[1])
                    return isApplicationID(value, snap: false) ? value : nil
                }
            }
        }
        return nil
    }

    /// `text` without the spaces and tabs around it (a key file's lines).
    private static func trimmed(_ text: Substring) -> String {
        String(text.drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }

    /// "a Flatpak sandbox (org.example.App)", "a Snap sandbox (example)".
    public var description: String {
        let name = kind == .flatpak ? "a Flatpak sandbox" : "a Snap sandbox"
        return applicationID.map { "\(name) (\($0))" } ?? name
    }
}
