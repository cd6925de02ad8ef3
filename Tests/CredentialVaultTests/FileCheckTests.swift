import Foundation
import CredentialVaultTestSupport
import Testing

@testable import CredentialVault

#if canImport(Glibc)
import Glibc
#endif

/// Files are checked before they are used: what sits at the vault's or the
/// key file's path is opened without following a link and without blocking, and `fstat` on that
/// descriptor must show a private regular file of the user's under the size limit before a byte
/// is read. Anything else is a typed error within milliseconds: never a hang, never a gigabyte.
@Suite(.ownThread) final class FileCheckTests {
    let dir = TempDirectory()

    /// Where a vault would be, in a private directory.
    private func vaultPath() -> URL {
        let url = dir.path("vault/v.cvault")
        mkdir(url.deletingLastPathComponent().path, 0o700)
        return url
    }

    /// Opens `url` as a vault on a thread of its own; the error it got. A FIFO opened for
    /// reading would block until a writer came: the ceiling turns that into a failure.
    private func openError(_ url: URL, unblock: @escaping @Sendable () -> Void = {}) -> CredentialVaultError? {
        let outcome = withinDeadline(.seconds(60), "opening \(url.lastPathComponent)", unblock: unblock) { () -> CredentialVaultError? in
            do throws(CredentialVaultError) {
                _ = try LockedVault(url: url)
                return nil
            } catch { return error }
        }
        return outcome ?? nil
    }

    /// Opens `url` as a vault on this thread (a regular file: it cannot block) and returns the
    /// error it got with the bytes this thread read meanwhile (`rchar` of /proc/thread-self/io).
    private func openErrorCountingReads(_ url: URL) throws -> (CredentialVaultError?, Int) {
        func bytesRead() throws -> Int {
            let io = try String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8)
            let line = try #require(io.split(separator: "\n").first { $0.hasPrefix("rchar:") })
            return try #require(Int(line.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces)))
        }
        let before = try bytesRead()
        var error: CredentialVaultError?
        do throws(CredentialVaultError) { _ = try LockedVault(url: url) } catch let caught { error = caught }
        let after = try bytesRead()
        return (error, after - before)
    }

    @Test func aFIFOAtTheVaultPathIsRefusedAtOnce() throws {
        let url = vaultPath()
        #expect(mkfifo(url.path, 0o600) == 0)
        // On a timeout, the writer end releases a blocked reader.
        let path = url.path
        let error = openError(url) {
            let fd = open(path, O_WRONLY | O_NONBLOCK)
            if fd >= 0 { close(fd) }
        }
        guard case .invalidArgument(let message) = error else {
            Issue.record("expected invalidArgument for a FIFO, got \(String(describing: error))")
            return
        }
        #expect(message.contains(url.path) && message.contains("FIFO"))
    }

    @Test func aSymbolicLinkToDevZeroIsRefusedWithoutReading() throws {
        let url = vaultPath()
        #expect(symlink("/dev/zero", url.path) == 0)
        let error = openError(url)
        guard case .invalidArgument(let message) = error else {
            Issue.record("expected invalidArgument for a link to /dev/zero, got \(String(describing: error))")
            return
        }
        #expect(message.contains("symbolic link") && message.contains("/dev/zero"))
    }

    @Test func aDirectoryAtTheVaultPathIsRefused() throws {
        let url = vaultPath()
        #expect(mkdir(url.path, 0o700) == 0)
        let error = openError(url)
        guard case .invalidArgument(let message) = error else {
            Issue.record("expected invalidArgument for a directory, got \(String(describing: error))")
            return
        }
        #expect(message.contains("directory"))
    }

    @Test func aHugeSparseFileIsRefusedBeforeReading() throws {
        let url = vaultPath()
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        #expect(fd >= 0 && ftruncate(fd, off_t(VaultFile.maxSize) * 2) == 0)
        close(fd)
        let error = openError(url)
        #expect(error == .corrupted("\(url.path) is larger than \(VaultFile.maxSize) bytes"))
    }

    /// A large file under the size limit that is not a vault is refused after its header, not
    /// read whole first (it once read 512 MiB whole, taking 545 MB).
    @Test func aLargeFileThatIsNotAVaultIsRefusedAfterItsHeader() throws {
        let url = vaultPath()
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        #expect(fd >= 0 && ftruncate(fd, 512 << 20) == 0)
        close(fd)
        let (error, read) = try openErrorCountingReads(url)
        #expect(error == .corrupted("not a CredentialVault file"))
        #expect(read < 1 << 20, "refused after reading \(read) bytes of 512 MiB")
        // And a vault of another library version: refused after its header too.
        var header = try TestVault.bytes(TestVault.create(dir, name: "other/v.cvault").url).prefix(VaultHeader.size)
        header[8] = 0x7f  // major version 127
        let future = dir.path("vault/future.cvault")
        let out = open(future.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        #expect(out >= 0 && write(out, Array(header), header.count) == header.count && ftruncate(out, 512 << 20) == 0)
        close(out)
        let (futureError, futureRead) = try openErrorCountingReads(future)
        guard case .unsupported? = futureError else {
            Issue.record("a future major version is unsupported")
            return
        }
        #expect(futureRead < 1 << 20, "refused after reading \(futureRead) bytes of 512 MiB")
    }

    /// The key file goes through the same check: a FIFO or a link is refused, never read.
    @Test func aKeyFileThatIsAFIFOOrALinkIsRefused() throws {
        let keyFile = try TestVault.keyFile(dir)
        let store = try TestVault.create(dir, secret: .keyFile(keyFile))
        let fifo = dir.path("fifo-key"), link = dir.path("link-key")
        #expect(mkfifo(fifo.path, 0o600) == 0 && symlink(keyFile.path, link.path) == 0)
        let configuration = TestVault.configuration(dir), vault = store.url
        for (candidate, word) in [(fifo, "FIFO"), (link, "symbolic link")] {
            let path = candidate.path
            let error = withinDeadline(.seconds(2), "unlocking with \(candidate.lastPathComponent)", unblock: {
                let fd = open(path, O_WRONLY | O_NONBLOCK)
                if fd >= 0 { close(fd) }
            }) { () -> CredentialVaultError? in
                do throws(CredentialVaultError) {
                    _ = try SealedFileStore.open(at: vault, secret: .keyFile(candidate), configuration: configuration)
                    return nil
                } catch { return error }
            }
            guard case .invalidArgument(let message)? = error else {
                Issue.record("expected invalidArgument for a key file that is a \(word), got \(String(describing: error))")
                continue
            }
            #expect(message.contains(word))
        }
        _ = try SealedFileStore.open(at: store.url, secret: .keyFile(keyFile), configuration: TestVault.configuration(dir))
        // The same rule for other secret files read by path (the CLI's passphrase files).
        expectThrows(\CredentialVaultError.isInvalidArgument) { try SecretFile.read(fifo.path, what: "the passphrase file", limit: 64) }
        chmod(keyFile.path, 0o644)
        expectThrows(\CredentialVaultError.isPermissionDenied) { try SecretFile.read(keyFile.path, what: "the passphrase file", limit: 64) }
    }
}
