import CredentialVaultCLI
import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

/// The CLI's streams and text at their edges: a stdout inherited in non-blocking mode, a forged
/// stderr line, ambiguous or raw characters in listings, secret files of `auth` read without
/// the checks, a process already traced.
@Suite(.ownThread) final class CLIStreamsAndTextTests {
    let dir = TempDirectory()

    private func credvault(_ arguments: [String], stdin: Data = Data(), executable: URL = BuiltProducts.credvault) throws -> CLIChild.Outcome {
        try CLIChild.run(arguments, executable: executable, environment: CLIChild.environment(dir), stdin: stdin)
    }

    /// A key-file vault holding `value` under s/big, made through the library (the value is
    /// larger than a pipe's buffer).
    private func vaultHolding(_ value: Data) throws -> (vault: String, keyFile: String) {
        let keyFile = try TestVault.keyFile(dir)
        let store = try TestVault.create(dir, name: "v/v.cvault", secret: .keyFile(keyFile))
        try store.save(value, for: CredentialKey(service: "s", account: "big"), options: .portable)
        return (store.url.path, keyFile.path)
    }

    /// Python spawns credvault with a non-blocking pipe as stdout and reads it only after a
    /// pause: `write` gets `EAGAIN` once the pipe is full. (At the merge of the fixes, the value
    /// was cut at 64 KiB with exit 3.)
    @Test func aNonBlockingStdoutGetsEveryByte() throws {
        let value = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let (vault, keyFile) = try vaultHolding(value)
        let script = """
            import array, fcntl, os, subprocess, sys, termios, time
            r, w = os.pipe()
            fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
            child = subprocess.Popen(sys.argv[1:], stdout=w)
            os.close(w)
            # Read nothing until the pipe is full: from then on the child's writes get EAGAIN.
            size = fcntl.fcntl(r, 1032)  # F_GETPIPE_SZ
            queued = array.array("i", [0])
            while True:
                fcntl.ioctl(r, termios.FIONREAD, queued)
                if queued[0] >= size or child.poll() is not None: break
                time.sleep(0.001)
            data = b""
            while True:
                chunk = os.read(r, 65536)
                if not chunk: break
                data += chunk
            sys.stdout.write("%d %d" % (child.wait(), len(data)))
            """
        let result = try credvault(
            ["python3", "-c", script, BuiltProducts.credvault.path, "lookup", "s", "big", "--vault", vault, "--key-file", keyFile],
            executable: URL(fileURLWithPath: "/usr/bin/env")
        ).stdoutText
        #expect(result == "0 \(value.count)", "exit status and bytes read: \(result)")
    }

    /// An argument with a line break cannot add a line of its own to stderr (here, a forged
    /// `credvault:` line): every error is one line, its control characters escaped.
    @Test func anErrorIsOneLineWhateverItQuotes() throws {
        for arguments in [["nosuch\ncredvault: created /tmp/forged"], ["list", "--frob\ncredvault: ok"], ["list", "--backend", "x\ny"]] {
            let outcome = try credvault(arguments)
            #expect(outcome.status == 2)
            #expect(outcome.stderr.split(separator: "\n").count == 1, "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.contains("\\x0A"), "\(outcome.stderr)")
        }
    }

    /// A name with a literal backslash is listed with it doubled, so that it can never read
    /// as the escape of a control character; formatting characters (a bidirectional override)
    /// are escaped too.
    @Test func listingsAreUnambiguous() throws {
        #expect(try credvault(["store", "svc", "a\\x09b"], stdin: Data("v".utf8)).status == 0)
        #expect(try credvault(["store", "svc", "evil\u{202E}txt"], stdin: Data("v".utf8)).status == 0)
        let listed = try credvault(["list"])
        #expect(listed.stdout == Data("svc\ta\\\\x09b\nsvc\tevil\\u{202E}txt\n".utf8), "\(String(decoding: listed.stdout, as: UTF8.self))")
        // JSON: DEL, C1 and formatting characters as \u escapes, the same value for a JSON reader.
        let json = Data(#"{"name":"a\#u{9B}b\#u{7F}c\#u{202E}"}"#.utf8)
        let escaped = TerminalText.jsonEscaped(json)
        #expect(String(decoding: escaped, as: UTF8.self) == #"{"name":"a\u009Bb\u007Fc\u202E"}"#)
        let decoded = try JSONSerialization.jsonObject(with: escaped) as? [String: String]
        #expect(decoded?["name"] == "a\u{9B}b\u{7F}c\u{202E}")
    }

    /// The secret files of `auth` and `insforge` are checked like passphrase files: a file
    /// others can read is refused before anything is sent. (At the merge of the fixes a 0644
    /// client secret was read and sent.)
    @Test func authSecretFilesAreCheckedLikePassphraseFiles() throws {
        let loose = dir.path("client-secret")
        _ = FileManager.default.createFile(atPath: loose.path, contents: Data("s3cret\n".utf8), attributes: [.posixPermissions: 0o644])
        let outcome = try credvault(
            ["auth", "token", "--client-credentials", "--issuer", "http://127.0.0.1:9", "--client-id", "x", "--client-secret-file", loose.path],
            executable: BuiltProducts.full)
        #expect(outcome.status == 9 && outcome.stderr.contains("chmod 600"), "\(outcome.status) \(outcome.stderr)")
        let password = dir.path("password")
        _ = FileManager.default.createFile(atPath: password.path, contents: Data("pw\n".utf8), attributes: [.posixPermissions: 0o640])
        let insforge = try credvault(
            ["insforge", "signin", "--url", "http://127.0.0.1:9", "--email", "a@example.com", "--password-file", password.path],
            executable: BuiltProducts.full)
        #expect(insforge.status == 9 && insforge.stderr.contains("chmod 600"), "\(insforge.status) \(insforge.stderr)")
    }

    /// A process that is already traced when it starts (a same-user process that attached
    /// before the executable made itself non-dumpable, a debugger) handles no secret.
    @Test func aTracedProcessRefusesToRun() throws {
        let script = """
            import ctypes, os, sys
            libc = ctypes.CDLL(None, use_errno=True)
            pid = os.fork()
            if pid == 0:
                libc.ptrace(0, 0, None, None)  # PTRACE_TRACEME
                os.execv(sys.argv[1], sys.argv[1:])
            os.waitpid(pid, 0)  # stopped at exec
            libc.ptrace(7, pid, None, None)  # PTRACE_CONT
            while True:
                _, status = os.waitpid(pid, 0)
                if os.WIFEXITED(status): break
                libc.ptrace(7, pid, None, ctypes.c_void_p(os.WSTOPSIG(status)))
            sys.stdout.write(str(os.WEXITSTATUS(status)))
            """
        // LeakSanitizer cannot run under ptrace (it would end the process with a status and a
        // report of its own): off for this child, so the status is the program's, sanitized or not.
        var environment = CLIChild.environment(dir)
        if let options = environment["ASAN_OPTIONS"] { environment["ASAN_OPTIONS"] = options + ":detect_leaks=0" }
        let traced = try CLIChild.run(
            ["python3", "-c", script, BuiltProducts.credvault.path, "list"], executable: URL(fileURLWithPath: "/usr/bin/env"),
            environment: environment)
        let status = traced.stdoutText, stderr = traced.stderr
        #expect(status == "3", "\(status) \(stderr)")
        #expect(stderr.contains("refusing to handle secrets"), "\(stderr)")
    }
}
