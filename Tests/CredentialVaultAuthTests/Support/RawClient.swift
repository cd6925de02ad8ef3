import Foundation

@testable import CredentialVaultAuth

#if canImport(Glibc)
import Glibc
#endif

/// A raw TCP client for misbehaving-browser tests (slow drip, oversized requests): runs on a
/// thread of its own, never on the cooperative pool.
enum RawClient {
    /// Connects to 127.0.0.1:`port`, sends `chunks` with `pause` between them, and returns
    /// what came back until the server closed (or `deadline` passed), with how long it took.
    static func exchange(
        port: UInt16, chunks: [Data], pause: Duration = .zero, deadline: Duration = .seconds(10)
    ) async -> (response: String, elapsed: Duration) {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let started = ContinuousClock.now
                let response = run(port: port, chunks: chunks, pause: pause, until: started + deadline)
                continuation.resume(returning: (response, ContinuousClock.now - started))
            }
        }
    }

    private static func run(port: UInt16, chunks: [Data], pause: Duration, until deadline: ContinuousClock.Instant) -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return "" }
        for (index, chunk) in chunks.enumerated() {
            if index > 0, pause > .zero { Thread.sleep(forTimeInterval: pause.secondsValue) }
            guard ContinuousClock.now < deadline, readable(fd) == false else { break }
            let sent = chunk.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 { break }
        }
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) >= 0 else { break }
            if descriptor.revents == 0 { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Whether the server has already answered or closed (then sending more is pointless).
    private static func readable(_ fd: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    /// `text` one byte per chunk.
    static func bytes(_ text: String) -> [Data] { text.utf8.map { Data([$0]) } }
}
