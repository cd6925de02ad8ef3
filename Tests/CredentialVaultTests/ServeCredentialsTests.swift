import Foundation
import CredentialVaultTestSupport
import Testing

import CredentialVault
@testable import CredentialVaultCLI

#if canImport(Glibc)
import Glibc
#endif

/// `credvault serve-credentials`, tested without systemd: a real server process and clients that
/// bind the abstract address systemd binds (`\0<random>/unit/<unit>/<credential>`), or hostile
/// ones (no address, a path, garbage, clients that never read, many at once).
@Suite(.ownThread) final class ServeCredentialsTests {
    let dir = TempDirectory()
    var socket: String { dir.path("run/creds.sock").path }
    var vault: String { dir.path("v.cvault").path }
    var key: String { dir.path("key").path }
    var environment: [String: String] { CLIChild.environment(dir) }
    static let secret = "s3rv3d-db-passw0rd"

    init() throws {
        #expect(mkdir(dir.path("run").path, 0o700) == 0)
        #expect(try CLIChild.run(rawArguments: [Array("keygen".utf8), Array(key.utf8)], environment: environment).status == 0)
        try store("db.example.com", "app", Data(Self.secret.utf8))
        try store("api.example.com", "token", Data("api-token".utf8))
    }

    /// `credvault store`, the value on stdin from a file (it may be larger than a pipe holds).
    func store(_ service: String, _ account: String, _ value: Data) throws {
        let input = dir.path("stdin")
        #expect(FileManager.default.createFile(atPath: input.path, contents: value))
        defer { unlink(input.path) }
        let run = try CLIChild.run(["store", service, account, "--vault", vault, "--key-file", key], environment: environment, stdinFile: input)
        #expect(run.status == 0, "credvault store: \(run.stderr)")
    }

    /// The server, started and waited for (its "listening" line on stderr).
    final class Server {
        let process = Process()
        private let errors = Pipe()
        private var buffer = Data()

        /// Started with `arguments`; with `typing`, on a terminal of its own (a pseudo-terminal
        /// held by `onATerminal`), where that passphrase is typed at the first prompt, and
        /// everything the server writes there is its log.
        init(_ arguments: [String], environment: [String: String], typing passphrase: String? = nil) throws {
            process.standardInput = FileHandle.nullDevice
            process.standardError = errors
            if let passphrase {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
                process.arguments = ["-c", Self.onATerminal, BuiltProducts.credvault.path, "serve-credentials"] + arguments
                process.environment = environment.merging(["TYPED_AT_THE_PROMPT": passphrase]) { $1 }
                process.standardOutput = errors
            } else {
                process.executableURL = BuiltProducts.credvault
                process.arguments = ["serve-credentials"] + arguments
                process.environment = environment
                process.standardOutput = FileHandle.nullDevice
            }
            try process.run()
            try waitForLog("listening on")
        }

        /// Runs ARGV on a pseudo-terminal, copies what it writes there to stdout, types
        /// $TYPED_AT_THE_PROMPT once "Passphrase: " shows (a prompt after that is only
        /// copied), passes SIGTERM on, and exits with its status.
        static let onATerminal = """
            import os, pty, signal, sys
            # Started by Foundation's Process with the test thread's signals blocked: a shell's
            # empty mask, for this process (SIGTERM passed on) and the server alike.
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            typed = os.environ.pop("TYPED_AT_THE_PROMPT").encode() + b"\\n"
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGTERM))
            seen = b""
            while True:
                try:
                    data = os.read(fd, 4096)
                except OSError:
                    break
                if not data:
                    break
                sys.stdout.buffer.write(data)
                sys.stdout.flush()
                if typed and b"Passphrase: " in seen + data:
                    os.write(fd, typed)
                    typed = None
                seen = (seen + data)[-64:]
            sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
            """

        /// Reads the server's stderr until it holds `text` (the server's own word that a thing
        /// happened: no sleeping); throws when the server ends first, or when `ceiling` seconds
        /// pass without a word (a ceiling for a hang, not a speed).
        func waitForLog(_ text: String, ceiling: Int32 = 120) throws {
            while !String(decoding: buffer, as: UTF8.self).contains(text) {
                var ready = pollfd(fd: errors.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, ceiling * 1000) > 0 else {
                    throw CocoaError(.fileReadUnknown, userInfo: ["waited for": text, "log": String(decoding: buffer, as: UTF8.self)])
                }
                let chunk = errors.fileHandleForReading.availableData
                if chunk.isEmpty { throw CocoaError(.fileReadUnknown, userInfo: ["log": String(decoding: buffer, as: UTF8.self)]) }
                buffer.append(chunk)
            }
        }

        /// SIGTERM, then the exit status and the whole log. Never hangs: a server on a terminal
        /// runs behind the Python wrapper (`onATerminal`), which once (under ASan, in CI) did
        /// not pass the signal on: the wrapper still ran with its handler set, the server had
        /// nothing pending, and a second SIGTERM stopped both at once. So the signal is sent
        /// again after a ceiling, and a server that outlives a third ceiling is killed and
        /// fails the test.
        func stop() -> (status: Int32, log: String) {
            let fd = errors.fileHandleForReading.fileDescriptor
            var ended = false
            var killed = false
            for attempt in 0..<3 where !ended {
                killed = attempt == 2
                kill(process.processIdentifier, killed ? SIGKILL : SIGTERM)
                while true {
                    var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    guard poll(&ready, 1, 60_000) > 0 else { break }
                    let chunk = errors.fileHandleForReading.availableData
                    if chunk.isEmpty { ended = true; break }
                    buffer.append(chunk)
                }
            }
            if killed { Issue.record("the server did not stop after two SIGTERMs: \(String(decoding: buffer, as: UTF8.self))") }
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: buffer, as: UTF8.self))
        }
    }

    func serve(_ maps: [String], _ extra: [String] = []) throws -> Server {
        try Server(["--socket", socket, "--vault", vault, "--key-file", key] + maps.flatMap { ["--map", $0] } + extra, environment: environment)
    }

    @Test func onlyMappedUnitsAndCredentialsGetTheirValue() throws {
        // systemd's readiness socket (Type=notify): READY=1 arrives once the server listens.
        let notify = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(notify) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name = Array("cv-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))".utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in name.enumerated() { raw[1 + i] = b } }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(notify, $0, socklen_t(MemoryLayout<sa_family_t>.size + 1 + name.count)) }
        }
        #expect(bound == 0)
        let server = try Server(
            ["--socket", socket, "--vault", vault, "--key-file", key]
                + ["db=db.example.com/app,web.service,worker.service", "api=api.example.com/token", "gone=none.example/x"].flatMap { ["--map", $0] },
            environment: environment.merging(["NOTIFY_SOCKET": "@" + String(decoding: name, as: UTF8.self)]) { $1 })
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(notify, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var message = [UInt8](repeating: 0, count: 64)
        let received = recv(notify, &message, message.count, 0)
        #expect(received > 0 && String(decoding: message[..<max(received, 0)], as: UTF8.self) == "READY=1")
        // A credential mapped to some units goes only to a process that runs in the unit it
        // claims: this test does not (a client inside a unit's cgroup: `onlyAProcessOfTheClaimedUnitGetsItsCredential`).
        #expect(AbstractClient.request(socket, from: .systemd(unit: "web.service", credential: "db")) == Data(), "claimed, not run in")
        #expect(AbstractClient.request(socket, from: .systemd(unit: "other.service", credential: "db")) == Data(), "an unmapped unit gets nothing")
        #expect(AbstractClient.request(socket, from: .systemd(unit: "web.service", credential: "nope")) == Data(), "an unmapped credential")
        #expect(AbstractClient.request(socket, from: .systemd(unit: "any.service", credential: "api")) == Data("api-token".utf8), "mapped for every unit")
        #expect(AbstractClient.request(socket, from: .systemd(unit: "web.service", credential: "gone")) == Data(), "mapped, not stored")
        let (status, log) = server.stop()
        #expect(status == 0)
        #expect(log.contains("refused db to web.service") && log.contains(", not in web.service") && log.contains("served api to any.service"))
        #expect(log.contains("refused db to other.service") && log.contains("refused nope to web.service") && log.contains("refused gone to web.service"))
        #expect(log.contains("warning: no credential none.example/x"))
        #expect(!log.contains(Self.secret) && !log.contains("api-token"), "the log never holds a value")
        #expect(access(socket, F_OK) != 0, "the socket is removed on SIGTERM")
    }

    @Test func hostileAddressesAreRefusedAndTheServerGoesOn() throws {
        let server = try serve(["db=db.example.com/app"])
        // Abstract addresses are shared by every process on the machine (another run of this
        // test among them): what a case does not test is random, so no two binds collide.
        let random = AbstractClient.Bind.randomPart
        let longest = (0..<107).map { _ in UInt8.random(in: UInt8(ascii: "g")...UInt8(ascii: "z")) }
        let hostile: [(AbstractClient.Bind, String)] = [
            (.none, "has no address"),
            (.path(dir.path("run/client.sock").path), "is a path"),
            (.abstract(longest), "not systemd's"),
            (.abstract(Array("\(random)/unit/web.service/d".utf8) + [0] + Array("b".utf8)), "a NUL byte"),
            (.abstract(Array("\(random)!/unit/web.service/db".utf8)), "hexadecimal"),
            (.abstract(Array("\(random)/unit/web.service/db/extra".utf8)), "four"),
            (.abstract(Array("\(random)/unit//db".utf8)), "unprintable"),
            (.abstract(Array("\(random)/unit/web.service/d\u{1B}[2J".utf8)), "unprintable"),
            (.abstract(Array("\(random)/".utf8) + [0xFF, 0xFE]), "UTF-8"),
        ]
        for (bind, _) in hostile { #expect(AbstractClient.request(socket, from: bind) == Data()) }
        #expect(AbstractClient.request(socket, from: .systemd(unit: "web.service", credential: "db")) == Data(Self.secret.utf8))
        let (status, log) = server.stop()
        #expect(status == 0)
        for (_, reason) in hostile { #expect(log.contains(reason), "\(reason) in \(log)") }
        #expect(!log.contains("\u{1B}"), "a terminal escape from a client's address never reaches the log")
    }

    @Test func aClientThatNeverReadsIsDroppedAndHoldsNoOneUp() throws {
        // Larger than a socket's buffers: the server waits for the client to read.
        try store("big.example", "blob", Data(repeating: 0x42, count: 1 << 20))
        let server = try serve(["big=big.example/blob", "db=db.example.com/app"], ["--client-timeout", "1"])
        let stalled = AbstractClient.connect(socket, from: .systemd(unit: "slow.service", credential: "big"))
        #expect(stalled >= 0)
        #expect(AbstractClient.request(socket, from: .systemd(unit: "web.service", credential: "db")) == Data(Self.secret.utf8), "served meanwhile")
        // Reading only once the server says it dropped the client: cut short.
        try server.waitForLog("refused big to slow.service")
        let received = AbstractClient.readAll(stalled, timeout: .seconds(10))
        #expect(received.count < 1 << 20, "the stalled client got \(received.count) bytes")
        #expect(server.process.isRunning)
        let (status, log) = server.stop()
        #expect(status == 0)
        #expect(log.contains("served db to web.service"))
        #expect(log.contains("refused big to slow.service") && log.contains("did not read its value within"))
    }

    /// The peer check behind the socket's mode: with the socket opened to everyone (as root, for
    /// the test), another user's process connects and gets nothing; root still gets the value.
    @Test(.enabled(if: geteuid() == 0, "needs root to run a client as another user"))
    func anotherUsersProcessGetsNothingEvenWhenItCanConnect() throws {
        let server = try serve(["db=db.example.com/app"])
        #expect(chmod(dir.path("run").path, 0o711) == 0 && chmod(socket, 0o666) == 0)
        #expect(chmod(dir.url.path, 0o711) == 0)
        let helper = try HelperProcess(["request-as-user", "65534", socket, "1f/unit/web.service/db"], environment: environment)
        #expect(try helper.waitForLine(startingWith: "received") == "received 0")
        #expect(helper.waitForExit() == 0)
        #expect(AbstractClient.request(socket, from: .systemd(unit: "web.service", credential: "db")) == Data(Self.secret.utf8))
        let (_, log) = server.stop()
        #expect(log.contains("uid 65534 is neither root nor this server's user"))
    }

    /// The unit in a client's address is only a claim: a credential mapped to a unit goes to a
    /// process in that unit's cgroup (as systemd's is), not to one in another unit's, in a
    /// subgroup a unit made (`Delegate=`) named like another unit, or in no unit. The cgroups
    /// are this test's own (cgroup v2, as root), under a slice named for it.
    @Test(.enabled(if: geteuid() == 0 && UnitCgroups.root != nil, "needs root and a writable cgroup v2 hierarchy"))
    func onlyAProcessOfTheClaimedUnitGetsItsCredential() throws {
        let cgroups = try UnitCgroups()
        defer { cgroups.remove() }
        let tag = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let app = "cv-app-\(tag).service", other = "cv-other-\(tag).service", inner = "cv-inner-\(tag).service"
        let server = try serve(["db=db.example.com/app,\(app),\(inner)", "api=api.example.com/token"])
        func request(from cgroup: String, claiming unit: String, _ credential: String = "db") throws -> String {
            let helper = try HelperProcess(
                ["request-in-cgroup", try cgroups.make(cgroup), socket, "1f/unit/\(unit)/\(credential)"], environment: environment)
            defer { _ = helper.waitForExit() }
            return try helper.waitForLine(startingWith: "received")
        }
        let served = "received \(Self.secret.utf8.count)"
        #expect(try request(from: app, claiming: app) == served)
        #expect(try request(from: other, claiming: app) == "received 0", "another unit's process")
        #expect(try request(from: "\(app)/\(inner)", claiming: inner) == "received 0", "a subgroup of a unit is that unit")
        #expect(AbstractClient.request(socket, from: .systemd(unit: app, credential: "db")) == Data(), "a process in no unit")
        #expect(try request(from: other, claiming: "any.service", "api") == "received \("api-token".utf8.count)", "mapped to every unit")
        let (status, log) = server.stop()
        #expect(status == 0)
        #expect(log.contains("served db to \(app)"))
        #expect(log.contains("refused db to \(app)") && log.contains("runs in \(other), not in \(app)"))
        #expect(log.contains("runs in \(app), not in \(inner)"))
        #expect(log.contains("served api to any.service") && log.contains("which runs in \(other)"), "the real peer is logged")
    }

    /// A client's pidfd is opened from its pid only on a kernel without `SO_PEERPIDFD`: when
    /// the option exists but failed (the client exited and was reaped), that pid may already be
    /// another process's, whose cgroup must not answer for the client.
    @Test func aPidIsTrustedOnlyWhereTheKernelHasNoPeerPidfd() {
        #expect(PeerUnit.mayOpenByPid(afterPeerPidfdFailed: ENOPROTOOPT))
        for failure in [ESRCH, EINVAL, EBADF, ENOTSOCK] {
            #expect(!PeerUnit.mayOpenByPid(afterPeerPidfdFailed: failure), "errno \(failure)")
        }
    }

    @Test func theUnitOfACgroupIsReadAsSystemdReadsIt() {
        #expect(PeerUnit.unit(ofCgroup: "/system.slice/web.service") == "web.service")
        #expect(PeerUnit.unit(ofCgroup: "/system.slice/web.service/worker.service") == "web.service", "a delegated subgroup")
        #expect(PeerUnit.unit(ofCgroup: "/user.slice/user-1000.slice/user@1000.service/app.slice/web.service") == "web.service")
        #expect(PeerUnit.unit(ofCgroup: "/user.slice/user-1000.slice/session-2.scope") == "session-2.scope")
        #expect(PeerUnit.unit(ofCgroup: "/system.slice/_cpu.x.service") == "cpu.x.service", "systemd's escape")
        #expect(PeerUnit.unit(ofCgroup: "/") == nil)
        #expect(PeerUnit.unit(ofCgroup: "/by-hand/web.service") == nil, "a group made by hand is no unit")
        #expect(PeerUnit.cgroupPath(in: "1:name=systemd:/system.slice/a.service\n") == "/system.slice/a.service")
        #expect(PeerUnit.cgroupPath(in: "9:name=systemd:/x\n0::/system.slice/b.service\n") == "/system.slice/b.service")
        #expect(PeerUnit.cgroupPath(in: "4:memory:/x\n") == nil)
    }

    /// Another process re-keys the vault (`credvault rotate`) while the server runs: the
    /// server opens it again and goes on serving (it answered every unit that the store was stale,
    /// and stayed up): no unit was refused.
    @Test func aVaultRotatedByAnotherProcessIsServedAfterwards() throws {
        let server = try serve(["api=api.example.com/token"])
        #expect(AbstractClient.request(socket, from: .systemd(unit: "a.service", credential: "api")) == Data("api-token".utf8))
        let rotated = try CLIChild.run(["rotate", "--vault", vault, "--key-file", key], environment: environment)
        #expect(rotated.status == 0, "\(rotated.stderr)")
        #expect(AbstractClient.request(socket, from: .systemd(unit: "a.service", credential: "api")) == Data("api-token".utf8))
        let (status, log) = server.stop()
        #expect(status == 0)
        #expect(!log.contains("cannot be read") && !log.contains(ReopenReason.keyChanged.description), "\(log)")
    }

    /// A server whose passphrase was typed at its start (`--ask-passphrase`) cannot open the
    /// vault again by itself once another process rotated it: it says to start it again and
    /// answers every client at once, never prompting again on a terminal nobody watches (the
    /// prompt held every client up while it waited).
    @Test func aServerWhosePassphraseWasTypedSaysToRestartItAfterARotation() throws {
        let passphraseFile = dir.path("passphrase").path
        #expect(FileManager.default.createFile(atPath: passphraseFile, contents: Data("typed-at-start\n".utf8), attributes: [.posixPermissions: 0o600]))
        let typedVault = dir.path("typed.cvault").path
        let stored = try CLIChild.run(
            ["store", "api.example.com", "token", "--vault", typedVault, "--passphrase-file", passphraseFile], environment: environment,
            stdin: Data("api-token".utf8))
        #expect(stored.status == 0, "\(stored.stderr)")
        let server = try Server(
            ["--socket", socket, "--vault", typedVault, "--ask-passphrase", "--map", "api=api.example.com/token"], environment: environment,
            typing: "typed-at-start")
        #expect(AbstractClient.request(socket, from: .systemd(unit: "a.service", credential: "api")) == Data("api-token".utf8))
        let rotated = try CLIChild.run(["rotate", "--vault", typedVault, "--passphrase-file", passphraseFile], environment: environment)
        #expect(rotated.status == 0, "\(rotated.stderr)")
        #expect(AbstractClient.request(socket, from: .systemd(unit: "a.service", credential: "api")) == Data())
        try server.waitForLog("start serve-credentials again")
        let (status, log) = server.stop()
        #expect(status == 0)
        #expect(log.components(separatedBy: "Passphrase: ").count == 2, "asked once, at the start: \(log)")
        #expect(!log.contains("typed-at-start") && !log.contains("api-token"), "the terminal shows no secret")
    }

    /// Another vault is put at the vault's path while the server runs (a restore from another
    /// backup, the vault made anew with the same key): the server opens the one now there and
    /// serves its values (it answered every unit that the vault was replaced, and stayed up).
    @Test func aVaultReplacedByAnotherIsServedAfterwards() throws {
        let server = try serve(["db=db.example.com/app"])
        #expect(AbstractClient.request(socket, from: .systemd(unit: "a.service", credential: "db")) == Data(Self.secret.utf8))
        #expect(rename(vault, vault + ".before") == 0)
        try store("db.example.com", "app", Data("the-new-vault's".utf8))
        #expect(AbstractClient.request(socket, from: .systemd(unit: "a.service", credential: "db")) == Data("the-new-vault's".utf8))
        let (status, log) = server.stop()
        #expect(status == 0)
        #expect(!log.contains(ReopenReason.replaced.description), "\(log)")
    }

    /// An ancestor of the socket's directory that others may write (not sticky) or that belongs
    /// to another user lets them swap the directory: refused at start, as sshd's StrictModes
    /// does; the test's own private directory under the sticky /tmp is fine (every other test).
    @Test func anAncestorOthersCanWriteOrOwnIsRefusedAtStart() throws {
        let shared = dir.path("shared")
        #expect(mkdir(shared.path, 0o777) == 0 && chmod(shared.path, 0o777) == 0)
        #expect(mkdir(shared.path + "/run", 0o700) == 0)
        let socket = shared.path + "/run/creds.sock"
        let arguments = ["serve-credentials", "--socket", socket, "--vault", vault, "--key-file", key, "--map", "db=db.example.com/app"]
        let writable = try CLIChild.run(arguments, environment: environment)
        #expect(writable.status == 9 && writable.stderr.contains("ancestor directory \(shared.path)"), "\(writable.status) \(writable.stderr)")
        if geteuid() == 0 {
            #expect(chmod(shared.path, 0o755) == 0 && chown(shared.path, 65534, 65534) == 0)
            let foreign = try CLIChild.run(arguments, environment: environment)
            #expect(foreign.status == 9 && foreign.stderr.contains("belongs to another user"), "\(foreign.stderr)")
        }
        #expect(access(socket, F_OK) != 0, "no socket was made")
    }

    /// The path systemd connects to is the one given, not its real path: a symbolic link on it
    /// that another user may point elsewhere (it lies in their directory, or it is theirs in a
    /// sticky one) is refused at start, even though it leads to a private directory of this
    /// user's; a link no one else can change is followed and checked as the kernel follows it.
    @Test(.enabled(if: geteuid() == 0, "needs root to give a directory and a link to another user"))
    func aLinkAnotherUserCanRepointOnTheSocketsPathIsRefusedAtStart() throws {
        let theirs = dir.path("theirs").path, sticky = dir.path("sticky").path, run = dir.path("run").path
        #expect(mkdir(theirs, 0o755) == 0 && chown(theirs, 65534, 65534) == 0 && symlink(run, theirs + "/link") == 0)
        #expect(mkdir(sticky, 0o755) == 0 && chmod(sticky, 0o1777) == 0)
        #expect(symlink(run, sticky + "/their-link") == 0 && lchown(sticky + "/their-link", 65534, 65534) == 0)
        #expect(symlink(run, sticky + "/my-link") == 0)
        func start(_ socket: String) throws -> CLIChild.Outcome {
            try CLIChild.run(
                ["serve-credentials", "--socket", socket, "--vault", vault, "--key-file", key, "--map", "db=db.example.com/app"],
                environment: environment, timeout: 60)  // a ceiling: refused at start, or served until then
        }
        let inTheirDirectory = try start(theirs + "/link/creds.sock")
        #expect(inTheirDirectory.status == 9 && inTheirDirectory.stderr.contains("ancestor directory \(theirs) belongs to another user"))
        let theirLink = try start(sticky + "/their-link/creds.sock")
        #expect(theirLink.status == 9 && theirLink.stderr.contains("symbolic link \(sticky)/their-link"), "\(theirLink.stderr)")
        #expect(access(socket, F_OK) != 0, "no socket was made")
        let server = try Server(
            ["--socket", sticky + "/my-link/creds.sock", "--vault", vault, "--key-file", key, "--map", "db=db.example.com/app"],
            environment: environment)
        #expect(AbstractClient.request(socket, from: .systemd(unit: "a.service", credential: "db")) == Data(Self.secret.utf8))
        #expect(server.stop().status == 0)
    }

    @Test func manyClientsAtOnceAreAllServed() throws {
        let server = try serve(["db=db.example.com/app"])
        let sockets = (0..<100).map { i in AbstractClient.connect(socket, from: .systemd(unit: "unit-\(i).service", credential: "db")) }
        #expect(sockets.allSatisfy { $0 >= 0 })
        let answers = sockets.map { AbstractClient.readAll($0) }
        #expect(answers.allSatisfy { $0 == Data(Self.secret.utf8) }, "\(answers.filter { $0 != Data(Self.secret.utf8) }.count) not served")
        let (status, log) = server.stop()
        #expect(status == 0)
        #expect(log.components(separatedBy: "served db to unit-").count == 101)
    }

    @Test func badCommandLinesAndSocketPathsAreUsageErrors() throws {
        func run(_ arguments: [String]) throws -> CLIChild.Outcome {
            try CLIChild.run(rawArguments: (["serve-credentials"] + arguments).map { Array($0.utf8) }, environment: environment, timeout: 20)
        }
        let base = ["--vault", vault, "--key-file", key]
        for arguments in [
            ["--map", "db=db.example.com/app"], ["--socket", socket], ["--socket", socket, "--map", "db"],
            ["--socket", socket, "--map", "db=noslash"], ["--socket", socket, "--map", "a/b=s/a"],
            ["--socket", socket, "--map", "db=s/a", "--map", "db=t/b"], ["--socket", socket, "--map", "db=s/a,u.service,"],
            ["--socket", socket, "--map", "db=s/a", "--client-timeout", "0"], ["--socket", socket, "--map", "db=s/a", "--client-timeout", "nan"],
        ] {
            let outcome = try run(arguments + base)
            #expect(outcome.status == 2, "\(arguments): \(outcome.stderr)")
        }
        // A regular file where the socket goes is never replaced.
        #expect(FileManager.default.createFile(atPath: socket, contents: Data("keep".utf8)))
        #expect(try run(["--socket", socket, "--map", "db=db.example.com/app"] + base).status == 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: socket)) == Data("keep".utf8))
        unlink(socket)
        // A second server on a live socket: busy, saying so (not the vault lock's message).
        let server = try serve(["db=db.example.com/app"])
        let second = try run(["--socket", socket, "--map", "db=db.example.com/app"] + base)
        #expect(second.status == 7)
        #expect(second.stderr.contains("another server is already listening on \(socket)") && !second.stderr.contains("vault is locked"), "\(second.stderr)")
        #expect(AbstractClient.request(socket, from: .systemd(unit: "web.service", credential: "db")) == Data(Self.secret.utf8), "the first still serves")
        _ = server.stop()
        // A directory others can write to.
        #expect(chmod(dir.path("run").path, 0o777) == 0)
        #expect(try run(["--socket", socket, "--map", "db=db.example.com/app"] + base).status == 9)
    }

    @Test func systemdAddressesParse() throws {
        let address = try PeerAddress(abstractName: Array("adf9d86b6eda275e/unit/foobar.service/credx".utf8))
        #expect(address.unit == "foobar.service" && address.credential == "credx")
        #expect(throws: PeerAddress.Refusal.self) { try PeerAddress(abstractName: Array("adf9d86b6eda275e17/unit/a/b".utf8)) }
        #expect(throws: PeerAddress.Refusal.self) { try PeerAddress(abstractName: Array("adf9/units/a/b".utf8)) }
        #expect(throws: PeerAddress.Refusal.self) { try PeerAddress(abstractName: Array("/unit/a/b".utf8)) }
        let map = try CredentialMap(["db=db.example.com/app%2Fwith%2Fslashes,a.service", "db=other/x,b.service"])
        #expect(map.entry(credential: "db", unit: "a.service")?.key.account == "app/with/slashes")
        #expect(map.entry(credential: "db", unit: "b.service")?.key.service == "other")
        #expect(map.entry(credential: "db", unit: "c.service") == nil)
    }
}
