/// Reading a whole vault file without the lock, while writers may commit in place.
extension VaultContents {
    /// How many times a reader without the lock reads a file that keeps changing before it says
    /// `busy`: each commit is a few hundred microseconds, so this is only reached under a
    /// sustained stream of saves.
    static let unlockedReadAttempts = 8

    /// Decodes `bytes`, read from `location` without the lock at `fingerprint`. A reader copies
    /// the file page by page, so while writers commit in place it can see the two commit records
    /// (and the journal) from different moments: a verdict of `tampered` or `corrupted` is
    /// reported only when a second read of the same file finds the same first 12 KiB (header
    /// and commit records) and size. When the file changed in between, the fresh read is
    /// decoded instead (after a rewrite by rename, a new file with the same key: a compaction),
    /// up to `unlockedReadAttempts` times; then `busy`. Returns the contents and the
    /// fingerprint of the read they came from.
    static func decodeUnlocked(
        bytes first: [UInt8], fingerprint: AtomicFile.Fingerprint, header: VaultHeader, keys: VaultKeys, location: FileLocation
    ) throws(CredentialVaultError) -> (VaultContents, AtomicFile.Fingerprint) {
        var bytes = first, fingerprint = fingerprint, header = header
        for _ in 0..<unlockedReadAttempts {
            do throws(CredentialVaultError) {
                return (try decode(bytes: bytes, header: header, keys: keys), fingerprint)
            } catch {
                guard error.isDamage, let (again, seen) = try PrivateFiles.readVersion(location, rules: .vault)
                else { throw error }
                if seen.device == fingerprint.device && seen.inode == fingerprint.inode {
                    guard changedInPlace(bytes, again) else { throw error }
                } else {
                    // Replaced by a rewrite: read it if it is the same vault under the same key.
                    guard let fresh = try? VaultFile.header(of: again), fresh.vaultID == header.vaultID,
                        fresh.wrappedKey == header.wrappedKey
                    else { throw error }
                    header = fresh
                }
                (bytes, fingerprint) = (again, seen)
            }
        }
        throw .busy
    }

    /// Whether a second read of the file differs from the first where a writer commits:
    /// the size, or the header and commit-record blocks.
    private static func changedInPlace(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        let blocks = CommitRecord.snapshotOffset
        return a.count != b.count || a.prefix(blocks) != b.prefix(blocks)
    }
}

extension CredentialVaultError {
    /// `tampered` or `corrupted`: what a file read in the middle of a commit can look like.
    fileprivate var isDamage: Bool {
        switch self {
        case .tampered, .corrupted: true
        default: false
        }
    }
}
