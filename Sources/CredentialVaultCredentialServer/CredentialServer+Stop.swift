import CLinuxCalls
import CredentialVault
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension CredentialServer {
    /// Tells a running server to stop, from any thread or task (a signal handler's thread
    /// included: it only writes a byte to a pipe the server's `poll` watches).
    ///
    /// One stop per server: a stop's request is one byte, which the server that reads it takes,
    /// so a run given a stop another server's run already has is refused (`invalidArgument`)
    /// rather than left serving after the stop was asked for.
    public final class Stop: Sendable {
        /// How to stop.
        enum Mode: UInt8 {
            /// Stop accepting, finish the clients being answered, return.
            case gracefully = 1
            /// Return at once, dropping the clients being answered.
            case immediately = 2
        }

        /// Readable once a stop was asked for (non-blocking, close-on-exec).
        let readEnd: Int32
        /// `-1` when another part of the process writes (`init(readingFrom:)`).
        private let writeEnd: Int32
        /// Set by the run that stops by it (see the type: a byte is read by one server only).
        private let claimed = Atomic(false)

        /// A stop no one has asked for yet.
        public init() throws(CredentialVaultError) {
            var ends: [Int32] = [-1, -1]
            guard cl_pipe_cloexec_nonblock(&ends) == 0 else { throw .io("cannot create a pipe: \(String(cString: strerror(errno)))") }
            readEnd = ends[0]
            writeEnd = ends[1]
        }

        /// A stop asked for by any byte written to the pipe whose read end is `readEnd` (which
        /// it then owns): 2 asks for an immediate stop, any other byte a graceful one.
        package init(readingFrom readEnd: Int32) {
            _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
            self.readEnd = readEnd
            writeEnd = -1
        }

        deinit {
            close(readEnd)
            if writeEnd >= 0 { close(writeEnd) }
        }

        /// Stop accepting connections, finish writing to the clients being answered (each
        /// within its timeout: no unit gets a value cut short), remove the socket and return.
        public func stopGracefully() { send(.gracefully) }

        /// Drop the clients being answered, remove the socket and return, at once.
        public func stopNow() { send(.immediately) }

        private func send(_ mode: Mode) {
            guard writeEnd >= 0 else { return }
            var byte = mode.rawValue
            // A full pipe already holds requests enough to wake the server.
            while write(writeEnd, &byte, 1) < 0 && errno == EINTR {}
        }

        /// Whether this is the first run to take this stop (`false`: another run has it).
        func claim() -> Bool { !claimed.exchange(true, ordering: .acquiringAndReleasing) }

        /// What was asked for since the last call (an immediate stop wins), `nil` if nothing.
        func take() -> Mode? {
            var asked: Mode?
            var bytes = [UInt8](repeating: 0, count: 64)
            while true {
                let count = read(readEnd, &bytes, bytes.count)
                if count < 0 && errno == EINTR { continue }
                // The other end closed (`init(readingFrom:)`'s writer went away): take it as a graceful stop.
                if count == 0 { return asked ?? .gracefully }
                if count < 0 { return asked }
                for byte in bytes[..<count] where asked != .immediately { asked = byte == Mode.immediately.rawValue ? .immediately : .gracefully }
            }
        }
    }
}
