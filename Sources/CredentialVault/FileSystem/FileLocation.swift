#if canImport(Glibc)
import Glibc
#endif

/// A file named relative to a directory that was opened and checked once (`PrivateDirectory`):
/// every open, rename, unlink and fsync of it goes through that directory's descriptor, so a
/// directory renamed or swapped after the check cannot redirect the work to another place. A
/// location without a directory (a key file the caller names) is resolved by path.
package struct FileLocation: Sendable {
    /// The checked directory; `nil` for a file resolved by its path.
    let directory: PrivateDirectory?
    /// The name inside `directory` (one component), or the whole path without one.
    package let name: String

    /// The file `name` in `directory`.
    package init(_ name: String, in directory: PrivateDirectory) {
        self.directory = directory
        self.name = name
    }

    /// A file resolved by `path` (only its last component is opened without following a link).
    init(path: String) {
        directory = nil
        name = path
    }

    /// The path, for messages only: the work itself never goes by it.
    package var path: String {
        guard let directory else { return name }
        return directory.path == "/" ? "/\(name)" : "\(directory.path)/\(name)"
    }

    /// The descriptor `*at` calls take: the directory's, or `AT_FDCWD` for a path.
    package var directoryFD: Int32 { directory?.fd ?? AT_FDCWD }

    /// Another file in the same directory.
    func sibling(_ name: String) -> FileLocation {
        if let directory { return FileLocation(name, in: directory) }
        let parent = self.name.lastIndex(of: "/").map { String(self.name[...$0]) } ?? ""
        return FileLocation(path: parent + name)
    }

    /// `lstat` of the name (links are not followed); `nil` when nothing has that name.
    func status() throws(CredentialVaultError) -> stat? {
        var info = stat()
        if fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 { return info }
        if errno == ENOENT { return nil }
        throw PrivateFiles.error(errno, "cannot inspect \(path)")
    }
}
