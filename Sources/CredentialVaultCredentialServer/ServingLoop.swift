import CLinuxCalls
import CredentialVault
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The loop of a `CredentialServer`: accepts systemd's connections on `socket`, reads each
/// peer's address (`PeerAddress`), writes the mapped credential's value and closes; refuses
/// (closes without a byte) anything else, logging why, never a value.
///
/// One thread, non-blocking descriptors and `poll`: a client that does not read cannot hold the
/// others up. Every client has `clientTimeout` to take its value, then it is dropped; at most
/// `maxClients` are served at once (more wait in the listen backlog). The value is loaded from
/// the store for each request, so a rotated credential is served at once.
struct ServingLoop {
    /// systemd's limit on a credential (`CREDENTIAL_SIZE_MAX`): a larger value is refused here
    /// rather than cut there.
    static let valueLimit = 1 << 20

    let socket: ListeningSocket
    let map: CredentialMap
    /// Opened again when another process replaced or re-keyed the vault.
    let store: ReopeningStore
    let clientTimeout: Duration
    let maxClients: Int
    /// Where events go: names are escaped there, values never passed.
    let log: @Sendable (String) -> Void

    /// Serves until `stop` says so. A graceful stop ends accepting (new connections wait in the
    /// backlog, and are reset when the socket closes) and returns once every client being
    /// answered has its whole value or was dropped at its deadline: no unit gets a value cut
    /// short by the stop. An immediate stop returns at once, dropping them.
    func run(until stop: CredentialServer.Stop) throws(CredentialVaultError) {
        var clients: [ServedClient] = []
        var acceptPausedUntil: ContinuousClock.Instant?
        var draining = false
        while true {
            if draining && clients.isEmpty { return }
            let now = ContinuousClock.now
            if let paused = acceptPausedUntil, paused <= now { acceptPausedUntil = nil }
            let accepting = !draining && clients.count < maxClients && acceptPausedUntil == nil
            var fds = [pollfd(fd: stop.readEnd, events: Int16(POLLIN), revents: 0)]
            if accepting { fds.append(pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)) }
            fds += clients.map { pollfd(fd: $0.fd, events: Int16(POLLOUT), revents: 0) }
            let wake = (clients.map(\.deadline) + [acceptPausedUntil].compactMap { $0 }).min()
            let ready = poll(&fds, nfds_t(fds.count), wake.map { Self.milliseconds(until: $0, from: now) } ?? -1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .io("poll failed: \(String(cString: strerror(errno)))")
            }
            if fds[0].revents != 0 {
                switch stop.take() {
                case .immediately: return
                case .gracefully:
                    if !draining && !clients.isEmpty { log("stopping: finishing \(clients.count) client(s) being answered") }
                    draining = true
                case nil: break
                }
            }
            // The clients' events first (their entries follow the listener's, if it was polled).
            let offset = accepting ? 2 : 1
            var remaining: [ServedClient] = []
            for (index, client) in clients.enumerated() {
                let events = Int32(fds[offset + index].revents)
                if events & Int32(POLLOUT) != 0 || events & (Int32(POLLERR) | Int32(POLLHUP) | Int32(POLLNVAL)) != 0 {
                    if let kept = progress(client) { remaining.append(kept) }
                } else if ContinuousClock.now >= client.deadline {
                    refuse(client.request, pid: client.pid, "did not read its value within \(clientTimeout): dropped")
                } else {
                    remaining.append(client)
                }
            }
            clients = remaining
            if accepting && !draining && fds[1].revents != 0 {
                while clients.count < maxClients {
                    // Close-on-exec from the start: in an application, another thread may
                    // start a program at any moment, which must never inherit a connection
                    // (it could answer systemd in this server's place).
                    let fd = cl_accept_cloexec_nonblock(socket.fd)
                    if fd < 0 {
                        if errno == EINTR || errno == ECONNABORTED { continue }
                        if errno != EAGAIN && errno != EWOULDBLOCK {
                            // Out of descriptors (EMFILE, ENFILE) or memory: wait a little, or
                            // the listener, still readable, would spin this loop.
                            log("cannot accept a connection (\(String(cString: strerror(errno)))): pausing 100 ms")
                            acceptPausedUntil = ContinuousClock.now + .milliseconds(100)
                        }
                        break
                    }
                    if let client = start(fd), let kept = progress(client) { clients.append(kept) }
                }
            }
        }
    }

    /// Checks a new connection and loads its value; `nil` (connection closed) when refused.
    private func start(_ fd: Int32) -> ServedClient? {
        // (pid, uid, gid): `struct ucred`, which Glibc's module does not export.
        var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else {
            close(fd)
            log("refused a connection: its peer credentials cannot be read")
            return nil
        }
        let (pid, uid, _) = credentials
        guard uid == 0 || uid == geteuid() else {
            close(fd)
            log("refused a connection from pid \(pid): uid \(uid) is neither root nor this server's user")
            return nil
        }
        let request: PeerAddress
        do throws(PeerAddress.Refusal) {
            request = try PeerAddress.of(fd)
        } catch {
            close(fd)
            log("refused a connection from pid \(pid): \(error)")
            return nil
        }
        guard let entry = map.entry(credential: request.credential, unit: request.unit) else {
            close(fd)
            refuse(request, pid: pid, "not mapped for this unit")
            return nil
        }
        // The unit in the address is the client's claim: a credential mapped to some units only
        // goes to a process that runs in the unit it claims (systemd connects from one).
        let peer = PeerUnit.of(fd, pid: pid)
        if !entry.units.isEmpty, peer != .unit(request.unit) {
            close(fd)
            refuse(request, pid: pid, "the client \(peer), not in \(request.unit)")
            return nil
        }
        let value: Data?
        do throws(CredentialVaultError) {
            value = try store.load(entry.key)
        } catch {
            close(fd)
            refuse(request, pid: pid, "\(entry.key) cannot be read: \(error)")
            return nil
        }
        guard var value else {
            close(fd)
            refuse(request, pid: pid, "no credential \(entry.key) is stored")
            return nil
        }
        guard value.count <= Self.valueLimit else {
            value.resetBytes(in: 0..<value.count)
            close(fd)
            refuse(request, pid: pid, "\(entry.key) is larger than systemd's 1 MiB limit on a credential")
            return nil
        }
        return ServedClient(fd: fd, request: request, pid: pid, peer: peer, value: value, deadline: ContinuousClock.now + clientTimeout)
    }

    /// Writes what the client takes now; the client when it is still to be served, else `nil`.
    private func progress(_ client: ServedClient) -> ServedClient? {
        switch client.write() {
        case .done:
            // The real peer when it is not the unit it claimed (a credential mapped to every unit).
            let real = client.peer == .unit(client.request.unit) ? "" : ", which \(client.peer)"
            log("served \(client.request.credential) to \(client.request.unit) (pid \(client.pid)\(real))")
            return nil
        case .waiting:
            if ContinuousClock.now < client.deadline { return client }
            refuse(client.request, pid: client.pid, "did not read its value within \(clientTimeout): dropped")
            return nil
        case .failed(let reason):
            refuse(client.request, pid: client.pid, "the connection failed (\(reason))")
            return nil
        }
    }

    private func refuse(_ request: PeerAddress, pid: Int32, _ why: String) {
        log("refused \(request.credential) to \(request.unit) (pid \(pid)): \(why)")
    }

    /// Milliseconds from `now` until `deadline`, rounded up, within 0 ... Int32.max.
    static func milliseconds(until deadline: ContinuousClock.Instant, from now: ContinuousClock.Instant) -> Int32 {
        // At most a day: no arithmetic below can overflow.
        let (seconds, attoseconds) = min(max(deadline - now, .zero), .seconds(86_400)).components
        let millis = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: millis)
    }
}
