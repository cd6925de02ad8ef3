import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// The advice for a directory other users can access never makes a shared directory private
/// (`chmod 700 /tmp` was suggested): a sticky directory or `/` gets a private
/// subdirectory to keep the vault in.
@Suite(.ownThread) final class ModeAdviceTests {
    let dir = TempDirectory()

    private func refusal(_ url: URL) -> String {
        do {
            _ = try LockedVault(url: url)
        } catch .permissionDenied(let message) {
            return message
        } catch {
            Issue.record("expected permissionDenied, got \(error)")
        }
        return ""
    }

    @Test func aStickySharedDirectoryIsNeverToldToChmod() throws {
        let shared = dir.path("shared")
        #expect(mkdir(shared.path, 0o700) == 0 && chmod(shared.path, 0o1777) == 0)
        let message = refusal(shared.appendingPathComponent("x.cvault"))
        #expect(!message.contains("chmod 700"), "\(message)")
        #expect(message.contains("mkdir -m 700 \(shared.path)/credvault"), "\(message)")
    }

    /// `/` is refused only when others can write it (it is root's and 0755 on any sane system,
    /// which a vault's directory may be): the advice is then never to change its mode.
    @Test func theRootDirectoryIsNeverToldToChmod() throws {
        var info = stat()
        info.st_uid = geteuid()
        info.st_mode = S_IFDIR | 0o777
        var message = ""
        do {
            try PrivateFiles.checkOwnerAndMode(info, path: "/", isDirectory: true, owners: .notWritableByOthers)
            Issue.record("a root directory others can write must be refused")
        } catch .permissionDenied(let text) {
            message = text
        } catch {
            Issue.record("expected permissionDenied, got \(error)")
        }
        #expect(!message.contains("chmod 700 /"), "\(message)")
        #expect(message.contains("mkdir -m 700 /credvault"), "\(message)")
    }

    @Test func theLibrarysOwnDirectoryIsToldToChmod() throws {
        let own = dir.path("credential-vault")
        #expect(mkdir(own.path, 0o775) == 0 && chmod(own.path, 0o775) == 0)
        let message = refusal(own.appendingPathComponent("default.cvault"))
        #expect(message.contains("run: chmod 700 \(own.path)"), "\(message)")
        #expect(!message.contains("mkdir"), "\(message)")
    }

    @Test func anyOtherDirectoryGetsBothChoices() throws {
        let project = dir.path("project")
        #expect(mkdir(project.path, 0o777) == 0 && chmod(project.path, 0o777) == 0)
        let message = refusal(project.appendingPathComponent("v.cvault"))
        #expect(message.contains("if it holds nothing but vaults, run: chmod 700 \(project.path)"), "\(message)")
        #expect(message.contains("mkdir -m 700 \(project.path)/credvault"), "\(message)")
    }

    /// A directory of root's that its group or others can write, opened by another user (a
    /// service user in root's directory): `chmod 700` would lock that user out of it, and a
    /// subdirectory root makes there would be root's and closed to them too. The advice is
    /// the rule itself, for root to apply: take the write bits away.
    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root and setpriv to open as nobody"))
    func aDirectoryOfRootsOpenedByAnotherUserIsToldToDropWritesNotToChmod700() throws {
        chmod(dir.url.path, 0o711)  // let nobody reach the directory inside
        let roots = dir.path("service")
        #expect(mkdir(roots.path, 0o775) == 0 && chmod(roots.path, 0o775) == 0)
        let outcome = try CLIChild.run(
            ["--reuid=65534", "--regid=65534", "--clear-groups", BuiltProducts.credvault.path, "list", "--vault", roots.appendingPathComponent("v.cvault").path],
            executable: URL(fileURLWithPath: "/usr/bin/setpriv"), environment: CLIChild.environment(dir))
        #expect(outcome.status == 9, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("root's") && outcome.stderr.contains("chmod go-w \(roots.path)"), "\(outcome.stderr)")
        #expect(!outcome.stderr.contains("chmod 700") && !outcome.stderr.contains("mkdir"), "\(outcome.stderr)")
    }

    /// Another user's directory is refused, and the message says who may own it: the user who
    /// opens the vault, or root.
    @Test func anotherUsersDirectoryIsRefusedNamingWhoMayOwnIt() throws {
        let theirs = dir.path("theirs")
        #expect(mkdir(theirs.path, 0o755) == 0 && chown(theirs.path, 65534, 65534) == 0)
        let message = refusal(theirs.appendingPathComponent("v.cvault"))
        #expect(message.contains("belongs to another user (uid 65534)") && message.contains("or by root"), "\(message)")
    }
}
