import CSodium

/// libsodium initialisation. `sodium_init` is idempotent and thread-safe; a Swift global is
/// initialised once, lazily and atomically, so every entry point can simply touch it.
enum Sodium {
    private static let initialized: Bool = sodium_init() >= 0

    /// Makes sure libsodium is initialised (it picks its fastest implementations and seeds
    /// its random generator there). Traps only if libsodium cannot initialise at all, which
    /// means the process has no usable random source.
    static func ensureInitialized() {
        precondition(initialized, "libsodium failed to initialise (no random source?)")
    }
}
