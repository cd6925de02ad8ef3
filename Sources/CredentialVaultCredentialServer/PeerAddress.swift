#if canImport(Glibc)
import Glibc
#endif

/// What a connecting systemd says about itself: it binds its end of the connection to the
/// abstract address `\0<random hex>/unit/<unit>/<credential>` before it connects (systemd.exec(5),
/// `LoadCredential=` with an `AF_UNIX` socket path).
///
/// The address is a claim, not a proof: any process that may connect to the socket can bind
/// any abstract address. Who may connect is decided by the socket's mode (0600) and its peer
/// check (`SO_PEERCRED`: root or the server's own user); the address selects the unit, and a
/// credential mapped to some units only is served when the client's cgroup is that unit's
/// (`PeerUnit`).
package struct PeerAddress: Sendable, Equatable {
    package let unit: String
    package let credential: String

    /// Why an address is refused (for the log; names are escaped there).
    package enum Refusal: Error, Equatable, CustomStringConvertible {
        case unnamed
        case notAbstract
        case truncated
        case malformed(String)

        package var description: String {
            switch self {
            case .unnamed: "the client has no address (not systemd: systemd binds one naming the unit)"
            case .notAbstract: "the client's address is a path, not systemd's abstract address"
            case .truncated: "the client's address is longer than an AF_UNIX address can be"
            case .malformed(let why): "the client's address is not systemd's abstract RANDOM/unit/UNIT/CREDENTIAL (\(why))"
            }
        }
    }

    /// Parses the abstract name (the bytes after the leading NUL).
    package init(abstractName bytes: some Collection<UInt8>) throws(Refusal) {
        guard !bytes.contains(0) else { throw .malformed("a NUL byte") }
        guard let text = String(validating: Array(bytes), as: UTF8.self) else { throw .malformed("not UTF-8") }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[1] == "unit" else { throw .malformed("not four '/'-separated parts with 'unit' second") }
        let random = parts[0]
        guard (1...16).contains(random.utf8.count), random.utf8.allSatisfy(Self.isHexDigit) else {
            throw .malformed("the random part is not 1 to 16 hexadecimal digits")
        }
        guard CredentialMap.isValidUnit(String(parts[2])), !parts[3].isEmpty, !parts[3].unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        else { throw .malformed("an empty or unprintable unit or credential name") }
        unit = String(parts[2])
        credential = String(parts[3])
    }

    /// The peer address of the connected socket `fd` (`getpeername`).
    static func of(_ fd: Int32) throws(Refusal) -> PeerAddress {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let got = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard got == 0 else { throw .unnamed }
        // The kernel reports the full length even when it had to cut the address to the buffer.
        guard Int(length) <= MemoryLayout<sockaddr_un>.size else { throw .truncated }
        let pathLength = Int(length) - MemoryLayout<sa_family_t>.size
        guard pathLength > 0 else { throw .unnamed }
        return try withUnsafeBytes(of: address.sun_path) { (path) throws(Refusal) -> PeerAddress in
            guard path[0] == 0 else { throw .notAbstract }
            return try PeerAddress(abstractName: path[1..<pathLength])
        }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
