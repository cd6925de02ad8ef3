import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVaultCLI

#if canImport(Glibc)
import Glibc
#endif

/// `credvault exec`: real child processes (sh, python3) given credentials in their environment
/// and in sealed in-memory files; signals, exit statuses, missing credentials, closed stdin.
@Suite(.ownThread) final class ExecCommandTests {
    let dir = TempDirectory()
    lazy var environment = CLIChild.environment(dir)
    let secret = "s3cr3t-\(UUID().uuidString)"

    /// Stores `value` under `service` / `account` with the lean `credvault`.
    func store(_ service: String, _ account: String, _ value: Data) throws {
        let stored = try CLIChild.run(["store", service, account], environment: environment, stdin: value)
        try #require(stored.status == 0, "\(stored.stderr)")
    }

    func exec(_ arguments: [String], stdin: Data = Data()) throws -> CLIChild.Outcome {
        try CLIChild.run(["exec"] + arguments, environment: environment, stdin: stdin)
    }

    @Test func anEnvironmentVariableHoldsTheValueAndNoCommandLineDoes() throws {
        try store("api", "deploy", Data(secret.utf8))
        // The child prints its variable, then its own command line and credvault's (the same
        // process), which must not hold the value.
        let outcome = try exec(["--env", "TOKEN=api/deploy", "--", "sh", "-c", "printf '%s\\n' \"$TOKEN\"; tr '\\0' ' ' </proc/$$/cmdline"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let lines = String(decoding: outcome.stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first.map(String.init) == secret)
        #expect(lines.count >= 2 && !lines[1].contains(secret) && lines[1].hasPrefix("sh -c"))
    }

    @Test func theCommandIsTheSameProcessWithOnlyTheCallersDescriptorsAndTheFile() throws {
        try store("db", "app", Data(secret.utf8))
        // The descriptors the child finds open (fstat, which opens none itself).
        let script = """
            import os
            fds = []
            for fd in range(0, 1024):
                try:
                    os.fstat(fd); fds.append(fd)
                except OSError:
                    pass
            print(os.getpid(), ",".join(map(str, fds)), os.environ["DB"])
            """
        // What the same script finds when started directly: the descriptors this test process
        // hands on to any child.
        let direct = try LiveChild(URL(fileURLWithPath: "/usr/bin/env"), ["DB=none", "python3", "-c", script], environment: environment)
        let baseline = try #require(direct.nextLine()).split(separator: " ").map(String.init)
        _ = direct.wait()
        let child = try LiveChild(BuiltProducts.credvault, ["exec", "--fd", "DB=db/app", "--", "python3", "-c", script], environment: environment)
        let first = try #require(child.nextLine()).split(separator: " ").map(String.init)
        #expect(LiveChild.exitCode(child.wait()) == 0)
        #expect(first.first == String(child.pid), "the command runs in credvault's process")
        try #require(first.count == 3 && baseline.count == 3)
        let memfd = try #require(first[2].split(separator: "/").last.flatMap { Int($0) })
        let expected = (baseline[1].split(separator: ",").compactMap { Int($0) } + [memfd]).sorted()
        #expect(first[1].split(separator: ",").compactMap { Int($0) } == expected, "only the caller's descriptors and the file: \(first[1])")
    }

    @Test func aFileDescriptorIsASealedInMemoryFileReadableAgainAndAgain() throws {
        let value = Data("line one\n".utf8) + Data([0x00, 0xFF]) + Data(secret.utf8)
        try store("tls", "key", value)
        let script = """
            import fcntl, os, sys
            path = os.environ["KEY"]
            fd = int(path.rsplit("/", 1)[1])
            print(os.readlink("/proc/self/fd/%d" % fd))
            print(fcntl.fcntl(fd, 1034) & 15)
            first = open(path, "rb").read(); second = open(path, "rb").read()
            print(first.hex(), first == second)
            try:
                os.write(fd, b"x"); print("writable")
            except OSError as e:
                print("write refused", e.errno)
            try:
                os.ftruncate(fd, 0); print("truncated")
            except OSError as e:
                print("truncate refused", e.errno)
            """
        let outcome = try exec(["--fd", "KEY=tls/key", "--", "python3", "-c", script])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let lines = String(decoding: outcome.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        try #require(lines.count == 5, "\(lines)")
        #expect(lines[0] == "/memfd:credvault:KEY (deleted)", "never a file on disk")
        #expect(lines[1] == "15", "sealed: no write, grow, shrink or new seal")
        #expect(lines[2] == value.map { String(format: "%02x", $0) }.joined() + " True")
        #expect(lines[3] == "write refused \(EPERM)")
        #expect(lines[4] == "truncate refused \(EPERM)")
    }

    @Test func aMissingCredentialIsAnErrorBeforeTheCommandStarts() throws {
        try store("api", "deploy", Data(secret.utf8))
        let marker = dir.path("ran")
        let outcome = try exec(["--env", "A=api/deploy", "--env", "B=api/nobody", "--", "sh", "-c", "touch '\(marker.path)'"])
        #expect(outcome.status == 1)
        #expect(outcome.stderr.contains("no credential api / nobody (for B)"), "\(outcome.stderr)")
        #expect(!outcome.stderr.contains(secret))
        #expect(!FileManager.default.fileExists(atPath: marker.path), "the command must not run")
        // With --optional the command runs, without the missing variable.
        let optional = try exec(["--optional", "--env", "A=api/deploy", "--fd", "B=api/nobody", "--", "sh", "-c", "echo \"$A ${B-unset}\""])
        #expect(optional.status == 0)
        #expect(String(decoding: optional.stdout, as: UTF8.self) == "\(secret) unset\n")
    }

    @Test func aMissingOptionalCredentialLeavesItsVariableUnsetAlsoWhenInherited() throws {
        try store("api", "deploy", Data(secret.utf8))
        // The caller's own TOKEN and FILE (an arbitrary path) must not reach the command in
        // place of the missing credentials; a variable exec was not asked about passes.
        let outer = environment.merging(["TOKEN": "outer", "FILE": "/etc/passwd", "OTHER": "kept"]) { $1 }
        let outcome = try CLIChild.run(
            ["exec", "--optional", "--env", "A=api/deploy", "--env", "TOKEN=svc/missing", "--fd", "FILE=svc/missing", "--",
             "sh", "-c", "echo \"$A ${TOKEN-unset} ${FILE-unset} $OTHER\""],
            environment: outer)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(String(decoding: outcome.stdout, as: UTF8.self) == "\(secret) unset unset kept\n")
    }

    @Test func exitStatusesAndDeathsBySignalAreTheCommandsOwn() throws {
        #expect(try exec(["--", "sh", "-c", "exit 0"]).status == 0)
        #expect(try exec(["--", "sh", "-c", "exit 42"]).status == 42)
        #expect(try exec(["--", "sh", "-c", "exit 255"]).status == 255)
        let killed = try exec(["--", "sh", "-c", "kill -KILL $$"])
        #expect(killed.signal == SIGKILL)
        let terminated = try exec(["--", "sh", "-c", "kill -TERM $$"])
        #expect(terminated.signal == SIGTERM)
        let missing = try exec(["--", "credvault-no-such-command"])
        #expect(missing.status == 127 && missing.stderr.contains("cannot run credvault-no-such-command"))
        let notExecutable = try exec(["--", "/etc/hostname"])
        #expect(notExecutable.status == 126)
    }

    @Test func everySignalSentToItReachesTheCommand() throws {
        let script = """
            import os, signal, sys
            def handler(number, frame):
                os.write(1, b"got %d\\n" % number)  # unbuffered: a handler may interrupt a print
                if number == signal.SIGUSR2:
                    sys.exit(40)
            for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
                signal.signal(s, handler)
            os.write(1, b"ready %d\\n" % os.getpid())
            while True:
                signal.pause()
            """
        let child = try LiveChild(BuiltProducts.credvault, ["exec", "--", "python3", "-c", script], environment: environment)
        #expect(child.nextLine() == "ready \(child.pid)")
        for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2] {
            kill(child.pid, number)
            #expect(child.nextLine() == "got \(number)")
        }
        #expect(LiveChild.exitCode(child.wait()) == 40)
    }

    @Test func nothingIsLeftBehindWhenItIsKilled() throws {
        try store("api", "deploy", Data(secret.utf8))
        let child = try LiveChild(
            BuiltProducts.credvault, ["exec", "--env", "T=api/deploy", "--", "python3", "-c", "import os, signal; print(os.getpid(), flush=True); signal.pause()"],
            environment: environment)
        #expect(child.nextLine() == String(child.pid))
        // No process has it as parent: there is no second process to leave behind.
        let children = try FileManager.default.contentsOfDirectory(atPath: "/proc").filter { entry in
            guard Int32(entry) != nil, let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8) else { return false }
            let fields = stat[stat.range(of: ")", options: .backwards)!.upperBound...].split(separator: " ")
            return fields.count > 1 && fields[1] == "\(child.pid)"
        }
        #expect(children.isEmpty, "children of the exec process: \(children)")
        kill(child.pid, SIGKILL)
        #expect(LiveChild.signal(child.wait()) == SIGKILL)
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(child.pid)/stat"))
    }

    @Test func aCommandThatClosesItsStdinAndACredvaultStartedWithoutOne() throws {
        try store("api", "deploy", Data(secret.utf8))
        let closing = try exec(["--fd", "F=api/deploy", "--", "sh", "-c", "exec 0<&-; cat \"$F\"; echo; cat \"$F\""], stdin: Data("unread input".utf8))
        #expect(closing.status == 0)
        #expect(String(decoding: closing.stdout, as: UTF8.self) == "\(secret)\n\(secret)")
        // Started with descriptor 0 closed: the in-memory file never takes its place (a
        // program reading its stdin would read the secret); stdin is /dev/null instead.
        let child = try LiveChild(
            BuiltProducts.credvault, ["exec", "--fd", "F=api/deploy", "--", "sh", "-c", "echo \"$F\"; cat \"$F\"; echo; readlink /proc/$$/fd/0"],
            environment: environment, stdin: .closed)
        let path = try #require(child.nextLine())
        #expect(path != "/dev/fd/0" && path.hasPrefix("/dev/fd/"))
        #expect(child.nextLine() == secret)
        #expect(child.nextLine() == "/dev/null")
        #expect(LiveChild.exitCode(child.wait()) == 0)
    }

    @Test func valuesAnEnvironmentCannotHoldAreRefusedWithAWayOut() throws {
        try store("bin", "nul", Data([0x61, 0x00, 0x62]))
        let nul = try exec(["--env", "V=bin/nul", "--", "true"])
        #expect(nul.status == 2 && nul.stderr.contains("use --fd V="), "\(nul.stderr)")
        // A value over 128 KiB: refused in the environment, fine in a file.
        let big = dir.path("big")
        try Data(repeating: 0x41, count: 200_000).write(to: big)
        let stored = try LiveChild(BuiltProducts.credvault, ["store", "bin", "big"], environment: environment, stdin: .file(big))
        try #require(LiveChild.exitCode(stored.wait()) == 0)
        let huge = try exec(["--env", "V=bin/big", "--", "true"])
        #expect(huge.status == 2 && huge.stderr.contains("use --fd V="), "\(huge.stderr)")
        let file = try exec(["--fd", "V=bin/big", "--", "sh", "-c", "wc -c <\"$V\""])
        #expect(String(decoding: file.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "200000")
    }

    @Test func namesWithSlashesAndPercentSignsAreEscaped() throws {
        try store("git:https://example.com/team", "ci/bot", Data("one".utf8))
        try store("100%", "a", Data("two".utf8))
        let outcome = try exec([
            "--env", "ONE=git:https://example.com/team/ci%2Fbot", "--env", "TWO=100%25/a", "--", "sh", "-c", "echo \"$ONE $TWO\"",
        ])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(String(decoding: outcome.stdout, as: UTF8.self) == "one two\n")
    }

    @Test func badCommandLinesAreUsageErrors() throws {
        for arguments in [
            ["--env", "T=api/x", "true"],  // no --
            ["--env", "T=api/x", "--"],  // no command
            ["--env", "1T=api/x", "--", "true"], ["--env", "T-X=api/x", "--", "true"], ["--env", "T=apix", "--", "true"],
            ["--env", "T=/x", "--", "true"], ["--env", "T=50%off/x", "--", "true"],
            ["--env", "T=api/x", "--fd", "T=api/y", "--", "true"],
        ] {
            let outcome = try exec(arguments)
            #expect(outcome.status == 2, "\(arguments): \(outcome.stderr)")
        }
    }

    @Test func referencesParseAsDocumented() throws {
        let plain = try CredentialReference(parsing: "TOKEN=git:https://example.com/alice", option: "env")
        #expect(plain.variable == "TOKEN" && plain.key.service == "git:https://example.com" && plain.key.account == "alice")
        let escaped = try CredentialReference(parsing: "_X1=a%2Fb%25/c%2fd", option: "fd")
        #expect(escaped.key.service == "a/b%" && escaped.key.account == "c/d")
        let equals = try CredentialReference(parsing: "X=k=v/acct=1", option: "env")
        #expect(equals.key.service == "k=v" && equals.key.account == "acct=1")
        // UsageError has no cases: its message says which refusal it is.
        func refusal(saying words: String) -> (UsageError) -> Bool { { $0.message.contains(words) } }
        expectThrows(refusal(saying: "is written %25")) { try CredentialReference(parsing: "X=a%2/b", option: "env") }
        expectThrows(refusal(saying: "must not contain NUL")) { try CredentialReference(parsing: "X=a\u{0}/b", option: "env") }
        expectThrows(refusal(saying: "the service must not be empty")) { try CredentialReference(parsing: "X=/b", option: "env") }
        let control = try CredentialReference(parsing: "X=a\u{1B}/\tb", option: "env")
        #expect(control.key.service == "a\u{1B}" && control.key.account == "\tb", "names are data")
    }

    /// Whether the `SigIgn` mask (hex, from /proc/PID/status) holds SIGPIPE.
    static func ignoresSIGPIPE(_ mask: String) -> Bool? {
        UInt64(mask, radix: 16).map { $0 & (1 << (UInt64(SIGPIPE) - 1)) != 0 }
    }

    @Test(arguments: [false, true])
    func sigpipeIsHandedOnAsInheritedAlsoThroughTheFullExecutable(ignored: Bool) throws {
        // credvault ignores SIGPIPE for itself; the command gets it as credvault found it. With
        // `--backend auto` (no session bus here: the sealed file) credvault-full runs the
        // command line and becomes the command.
        try store("api", "deploy", Data(secret.utf8))
        for backend in ["file", "auto"] {
            let arguments = (ignored ? ["--ignore-signal=PIPE"] : []) + [BuiltProducts.credvault.path] + [
                "exec", "--backend", backend, "--env", "T=api/deploy", "--", "sh", "-c", "echo \"$T\"; grep SigIgn /proc/$$/status",
            ]
            let outcome = try CLIChild.run(
                rawArguments: arguments.map { Array($0.utf8) }, executable: URL(fileURLWithPath: "/usr/bin/env"), environment: environment)
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let lines = String(decoding: outcome.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
            try #require(lines.count == 2, "\(lines)")
            #expect(lines[0] == secret)
            #expect(Self.ignoresSIGPIPE(String(lines[1].dropFirst("SigIgn:".count)).trimmingCharacters(in: .whitespaces)) == ignored, "\(backend): \(lines[1])")
        }
    }
}
