import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultCLI

#if canImport(Glibc)
import Glibc
#endif

/// What the credential helpers read from their client: bounded in size and time, and for git
/// not a byte past the request's blank line.
@Suite(.ownThread) struct ProtocolInputTests {
    /// A pipe with `text` written into it; its write end is closed when `close` is true.
    func pipeHolding(_ text: String, close closeWriter: Bool) throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        text.utf8CString.withUnsafeBytes { _ = write(fds[1], $0.baseAddress, $0.count - 1) }
        if closeWriter {
            close(fds[1])
            fds[1] = -1
        }
        return (fds[0], fds[1])
    }

    @Test func aGitRequestEndsAtItsBlankLineAndNothingAfterItIsRead() throws {
        for (request, rest) in [("protocol=https\nhost=h\n\n", "next"), ("protocol=https\r\nhost=h\r\n\r\n", "x"), ("\n", "y")] {
            let (reader, writer) = try pipeHolding(request + rest, close: false)
            defer { close(reader); close(writer) }
            let read = try ProtocolInput.read(from: reader, limit: 1024, untilBlankLine: true, what: "request", idleMillis: 5_000)
            #expect(read == Data(request.utf8))
            var left = [UInt8](repeating: 0, count: 16)
            #expect(Glibc.read(reader, &left, 16) == rest.utf8.count, "the rest is still unread")
        }
    }

    @Test func aClientThatSendsNothingIsGivenUpOn() throws {
        let (reader, writer) = try pipeHolding("protocol=https\n", close: false)
        defer { close(reader); close(writer) }
        let gaveUp = withinDeadline(.seconds(60), "reading from a client that sends nothing, idle limit 100 ms") {
            (try? ProtocolInput.read(from: reader, limit: 1024, untilBlankLine: true, what: "request", idleMillis: 100)) == nil
        }
        #expect(gaveUp == true, "refused with a usage error at the idle limit")
    }

    /// A client that keeps the request coming (a byte now and then, each within the idle
    /// limit) is given up on at the request's overall deadline: here the idle limit is ten
    /// minutes, and the 200 ms deadline ends the wait.
    @Test func aRequestIsGivenUpOnAtItsOverallDeadlineWhateverTheIdleLimit() throws {
        let (reader, writer) = try pipeHolding("protocol=https\n", close: false)
        defer { close(reader); close(writer) }
        let message = withinDeadline(.seconds(60), "reading a request that never ends, overall limit 200 ms") { () -> String in
            do {
                _ = try ProtocolInput.read(from: reader, limit: 1024, untilBlankLine: true, what: "request", idleMillis: 600_000, totalMillis: 200)
                return "read"
            } catch {
                return (error as? UsageError)?.message ?? "\(error)"
            }
        }
        #expect(message == "the request did not arrive on stdin within 0.2 seconds")
    }

    @Test func inputOverTheLimitIsRefusedAndTheEndOfInputEndsIt() throws {
        let (big, _) = try pipeHolding(String(repeating: "a", count: 2000), close: true)
        defer { close(big) }
        expectThrows({ (error: UsageError) in error.message == "the input is longer than 1000 bytes" }) {
            try ProtocolInput.read(from: big, limit: 1000, untilBlankLine: false, what: "input")
        }
        let (small, _) = try pipeHolding("https://ghcr.io\n", close: true)
        defer { close(small) }
        #expect(try ProtocolInput.read(from: small, limit: 1000, untilBlankLine: false, what: "input") == Data("https://ghcr.io\n".utf8))
    }
}
