import Logging
import CredentialVaultTestSupport
import Foundation
import Synchronization
import Testing

@testable import CredentialVaultAuth

#if canImport(Glibc)
import Glibc
#endif

/// Idle connections cannot keep the browser's redirect out: the listener drops the oldest
/// connection still without a request head when too many wait (once it closed every new one
/// instead, so another local user holding about 40 idle connections, reopening each one
/// dropped, kept the redirect out until the sign-in's deadline), and any connection whose first
/// byte does not come within a second.
@Suite("loopback listener: idle connections cannot keep the redirect out", .ownThread)
struct LoopbackSlowlorisTests {
    /// A TCP connection to 127.0.0.1:`port` (blocking connect; -1 on failure).
    static func connect(_ port: UInt16) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            return -1
        }
        return fd
    }

    /// The attacker thread's controls, and what it reports.
    final class Attacker: Sendable {
        let stop = Atomic<Bool>(false)
        /// One arrival per idle connection the listener closed (and the attacker reopened).
        let reopened = Arrivals()
        /// Arrives once the attacker has closed all its connections.
        let done = Arrivals()
    }

    /// Keeps `count` idle connections to `port` open on a thread of its own, reopening each
    /// one the listener closes, until `stop` is set.
    static func holdIdle(_ count: Int, port: UInt16, _ attacker: Attacker) {
        Thread.detachNewThread {
            var fds: [Int32] = []
            while !attacker.stop.load(ordering: .relaxed) {
                fds = fds.filter { fd in
                    var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    guard poll(&descriptor, 1, 0) > 0 else { return true }
                    Glibc.close(fd)
                    attacker.reopened.arrive()
                    return false
                }
                while fds.count < count {
                    let fd = connect(port)
                    if fd < 0 { break }
                    fds.append(fd)
                }
                usleep(2000)  // the attacker's pace: it looks for dropped connections 500 times a second
            }
            for fd in fds { Glibc.close(fd) }
            attacker.done.arrive()
        }
    }

    @Test("40 idle connections held open (and reopened when dropped): the real redirect is served all the same")
    func idleConnectionsDoNotBlock() async throws {
        let listener = try LoopbackListener(port: .ephemeral, logger: .credentialVaultSilent)
        defer { listener.close() }
        let state = "state-\(UUID())"
        let waiting = Task { try await listener.waitForRedirect(state: state, timeout: .seconds(60)) }
        let attacker = Attacker()
        Self.holdIdle(40, port: listener.port, attacker)
        defer { attacker.stop.store(true, ordering: .relaxed) }
        #expect(await attacker.reopened.reached(1), "the listener is full: it drops idle connections, the attacker reopens them")
        let port = listener.port
        let browser = Task {
            await RawClient.exchange(port: port, chunks: [Data("GET /callback?code=c&state=\(state) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)])
        }
        let arrival = try await waiting.value  // kept out, it would end at the deadline with timedOut
        arrival.respond(success: true)
        #expect(FormEncoding.parameters(of: arrival.url)["code"] == "c")
        let answer = await browser.value.response
        #expect(answer.hasPrefix("HTTP/1.1 200"), "the browser got \(answer.prefix(80))")
        attacker.stop.store(true, ordering: .relaxed)
        #expect(await attacker.done.reached(1))
    }

    @Test("a connection that sends nothing gets 408 and is closed by the listener, which goes on waiting")
    func firstByteDeadline() async throws {
        let listener = try LoopbackListener(port: .ephemeral, logger: .credentialVaultSilent)
        defer { listener.close() }
        let waiting = Task { try await listener.waitForRedirect(state: "s", timeout: .seconds(60)) }
        defer { waiting.cancel() }
        let idle = await RawClient.exchange(port: listener.port, chunks: [])
        #expect(idle.closedByServer, "the idle connection was still open at the client's own 60 s ceiling")
        #expect(idle.response.hasPrefix("HTTP/1.1 408"), "\(idle.response)")
        // The wait itself went on: a redirect now is still served.
        let browser = Task { try await URLSessionTransport().send(HTTPRequest(url: URL(string: "\(listener.redirectURI)?state=s&code=c")!, timeout: .seconds(30))) }
        let arrival = try await waiting.value
        arrival.respond(success: true)
        #expect(try await browser.value.status == 200)
    }
}
