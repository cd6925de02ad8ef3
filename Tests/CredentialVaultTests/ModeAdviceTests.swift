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
}
