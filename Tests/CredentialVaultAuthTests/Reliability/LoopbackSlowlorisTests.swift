import Foundation
import Synchronization
import Testing

@testable import CredentialVaultAuth

#if canImport(Glibc)
import Glibc
#endif

/// Finding F2 of the third review of issue 12: once 16 connections were open, the listener
/// accepted and closed every new one, so another local user holding about 40 idle connections
/// (reopening each one dropped) kept the browser's redirect out until the sign-in's deadline.
@Suite("loopback listener: idle connections cannot keep the redirect out", .serialized)
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

    /// The attacker thread's controls.
    final class Attacker: Sendable {
        let stop = Atomic<Bool>(false)
        let done = Atomic<Bool>(false)
        let reopened = Atomic<Int>(0)
    }

    /// Keeps `count` idle connections to `port` open on a thread of its own, reopening each
    /// one the listener closes, until `stop` is set; `done` is set when it has closed them all.
    static func holdIdle(_ count: Int, port: UInt16, _ attacker: Attacker) {
        Thread.detachNewThread {
            var fds: [Int32] = []
            while !attacker.stop.load(ordering: .relaxed) {
                fds = fds.filter { fd in
                    var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    guard poll(&descriptor, 1, 0) > 0 else { return true }
                    Glibc.close(fd)
                    attacker.reopened.add(1, ordering: .relaxed)
                    return false
                }
                while fds.count < count {
                    let fd = connect(port)
                    if fd < 0 { break }
                    fds.append(fd)
                }
                usleep(2000)
            }
            for fd in fds { Glibc.close(fd) }
            attacker.done.store(true, ordering: .relaxed)
        }
    }

    @Test("40 idle connections held open (and reopened when dropped): the real redirect is served promptly")
    func idleConnectionsDoNotBlock() async throws {
        let listener = try LoopbackListener(port: .ephemeral, logger: .disabled)
        defer { listener.close() }
        let state = "state-\(UUID())"
        let waiting = Task { try await listener.waitForRedirect(state: state, timeout: .seconds(6)) }
        let attacker = Attacker()
        Self.holdIdle(40, port: listener.port, attacker)
        defer { attacker.stop.store(true, ordering: .relaxed) }
        try await Task.sleep(for: .milliseconds(500))
        // The listener is full: it has been closing (old code) or dropping (now) idle connections.
        let filling = ContinuousClock.now
        while attacker.reopened.load(ordering: .relaxed) == 0 && ContinuousClock.now - filling < .seconds(3) {
            try await Task.sleep(for: .milliseconds(10))
        }
        let started = ContinuousClock.now
        let port = listener.port
        let browser = Task {
            await RawClient.exchange(
                port: port, chunks: [Data("GET /callback?code=c&state=\(state) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)],
                deadline: .seconds(5))
        }
        #expect(attacker.reopened.load(ordering: .relaxed) > 0)  // the listener did drop idle connections
        let arrival = try await waiting.value
        let elapsed = ContinuousClock.now - started
        arrival.respond(success: true)
        #expect(FormEncoding.parameters(of: arrival.url)["code"] == "c")
        #expect(elapsed < .seconds(2), "the redirect took \(elapsed), reopened \(attacker.reopened.load(ordering: .relaxed))")
        let answer = await browser.value.response
        #expect(answer.hasPrefix("HTTP/1.1 200"), "the browser got \(answer.prefix(80))")
        attacker.stop.store(true, ordering: .relaxed)
        while !attacker.done.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(10)) }
    }

    @Test("an idle connection is dropped after about a second without its first byte")
    func firstByteDeadline() async throws {
        let listener = try LoopbackListener(port: .ephemeral, logger: .disabled)
        defer { listener.close() }
        let waiting = Task { try await listener.waitForRedirect(state: "s", timeout: .seconds(5)) }
        defer { waiting.cancel() }
        try await Task.sleep(for: .milliseconds(50))
        let idle = await RawClient.exchange(port: listener.port, chunks: [], deadline: .seconds(4))
        #expect(idle.elapsed >= .milliseconds(800) && idle.elapsed < .seconds(3), "closed after \(idle.elapsed)")
    }
}
