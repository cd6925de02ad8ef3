import CredentialVaultTestSupport
import Foundation

@testable import CredentialVaultAuth

#if canImport(Glibc)
import Glibc
#endif

/// A raw TCP client for misbehaving-browser tests (slow drip, stalled or oversized requests):
/// runs on a thread of its own, never on the cooperative pool.
enum RawClient {
    /// What came back.
    struct Exchange: Sendable {
        /// What the server sent until it closed (or `deadline` passed).
        var response: String
        /// Whether the server closed the connection (rather than the client's own deadline passing).
        var closedByServer: Bool
        /// Whether the server had answered or closed before `holdOpen` was opened.
        var answeredWhileHeld: Bool
    }

    /// Connects to 127.0.0.1:`port`, sends `chunks` with `pause` between them (a slow network,
    /// which nothing may depend on), arrives at `sent`, keeps the connection open without
    /// reading until `holdOpen` is opened (when given: then, if nothing came back yet, it hangs
    /// up at once), and returns what came back until the server closed or `deadline` passed (a
    /// ceiling against a hang, not a measurement).
    static func exchange(
        port: UInt16, chunks: [Data], pause: Duration = .zero, deadline: Duration = .seconds(60), sent: Arrivals? = nil,
        holdOpen: Gate? = nil
    ) async -> Exchange {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    returning: run(port: port, chunks: chunks, pause: pause, until: .now + deadline, sent: sent, holdOpen: holdOpen))
            }
        }
    }

    private static func run(
        port: UInt16, chunks: [Data], pause: Duration, until deadline: ContinuousClock.Instant, sent: Arrivals?, holdOpen: Gate?
    ) -> Exchange {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            sent?.arrive()
            return Exchange(response: "", closedByServer: false, answeredWhileHeld: false)
        }
        for (index, chunk) in chunks.enumerated() {
            if index > 0, pause > .zero { Thread.sleep(forTimeInterval: pause.secondsValue) }
            guard ContinuousClock.now < deadline, readable(fd) == false else { break }
            let sent = chunk.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 { break }
        }
        sent?.arrive()
        holdOpen?.waitBlocking()
        let answeredWhileHeld = holdOpen != nil && readable(fd)
        if holdOpen != nil && !answeredWhileHeld {  // released unanswered: the client gives up
            return Exchange(response: "", closedByServer: false, answeredWhileHeld: false)
        }
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) >= 0 else { break }
            if descriptor.revents == 0 { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 {
                return Exchange(response: String(decoding: received, as: UTF8.self), closedByServer: true, answeredWhileHeld: answeredWhileHeld)
            }
            received.append(contentsOf: buffer[0..<count])
        }
        return Exchange(response: String(decoding: received, as: UTF8.self), closedByServer: false, answeredWhileHeld: answeredWhileHeld)
    }

    /// Whether the server has already answered or closed (then sending more is pointless).
    private static func readable(_ fd: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    /// `text` one byte per chunk.
    static func bytes(_ text: String) -> [Data] { text.utf8.map { Data([$0]) } }
}
